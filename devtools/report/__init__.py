"""An HTML report of a run: one self-contained file (no network) with

- an operator timeline of the first run, one lane per place operators ran
  (portable kernels, each delegate, the steps inside a delegate);
- a sortable table of operators (time statistics over the runs, share of
  the total, the Python source line and module they came from);
- the memory plan of each planned buffer: tensors as boxes of their lifetime
  (instructions) by their offset, with the peak of live bytes;
- numeric gaps against eager PyTorch per operator, when the run logged its
  intermediate values (a debug buffer).

    python -m executorch.devtools.report --etdump run.etdp \\
        --etrecord model.etrecord [--debug-buffer run.bin] [--pte model.pte] \\
        -o report.html

`build_report(...)` returns the same page as a string.
"""

import argparse
import html
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional

from executorch.devtools.inspector import Inspector
from executorch.devtools.inspector._inspector import (
    DELEGATE_CALL,
    FRAMEWORK_EVENTS,
    OPERATOR_CALL,
)
from executorch.devtools.numeric_debugger import user_frame
from executorch.devtools.report._memory_plan import memory_plan

_TEMPLATE = os.path.join(os.path.dirname(__file__), "report_template.html")


def _source(event) -> Optional[str]:
    for trace in event.stack_traces.values():
        frame = user_frame(trace)
        if frame:
            return frame
    return None


def _module(event) -> str:
    """The innermost module path of the event's first node."""
    for hierarchy in event.module_hierarchy.values():
        paths = [
            v[0] for v in (hierarchy or {}).values() if isinstance(v, (list, tuple))
        ]
        if paths:
            return max(paths, key=len)
    return ""


def _lane(event) -> str:
    if event.is_delegated_op:
        return f"{event.delegate_backend_name or 'delegate'} (inside)"
    if event.name == DELEGATE_CALL:
        return event.delegate_backend_name or "delegate"
    return "portable"


def _operators(inspector: Inspector) -> List[Dict[str, Any]]:
    events = [e for e in inspector.operator_events() if e.perf_data is not None]
    total = sum(e.perf_data.avg for e in events) or 1.0
    rows = []
    for event in events:
        perf = event.perf_data
        rows.append(
            {
                "instruction": event._instruction_id,
                "name": event.name,
                "ops": sorted(set(event.op_types)),
                "lane": _lane(event),
                "avg": perf.avg,
                "p50": perf.p50,
                "min": perf.min,
                "max": perf.max,
                "share": perf.avg / total,
                "source": _source(event),
                "module": _module(event),
            }
        )
    return rows


def _timeline(inspector: Inspector) -> Dict[str, Any]:
    """Events of the first run of the "Execute" block, in milliseconds from
    the start of Method::execute."""
    blocks = [b for b in inspector.event_blocks if b.name == "Execute"]
    if not blocks:
        return {"lanes": [], "events": [], "total": 0}
    block = blocks[0]
    scale = _ms_per_tick(inspector)
    run = [
        e
        for e in block.events
        if e.perf_data is not None and e.start_time and e.name != OPERATOR_CALL
    ]
    start = min(e.start_time[0] for e in run)
    events = []
    total = 0.0
    for event in run:
        if event.name in FRAMEWORK_EVENTS:
            lane = "method"
        else:
            lane = _lane(event)
        begin = (event.start_time[0] - start) * scale
        duration = event.perf_data.raw[0]
        total = max(total, begin + duration)
        events.append(
            {
                "lane": lane,
                "name": event.name,
                "start": begin,
                "duration": duration,
                "instruction": event._instruction_id,
                "source": _source(event),
            }
        )
    order = ["method", "portable"]
    lanes = order + sorted({e["lane"] for e in events} - set(order))
    lanes = [lane for lane in lanes if any(e["lane"] == lane for e in events)]
    return {"lanes": lanes, "events": events, "total": total}


def _ms_per_tick(inspector: Inspector) -> float:
    from executorch.devtools.inspector._inspector import _NS_PER_UNIT

    return _NS_PER_UNIT[inspector._source_time_scale] / 1e6


def _memory(pte_path: Optional[str]) -> Optional[Dict[str, Any]]:
    if pte_path is None:
        return None
    with open(pte_path, "rb") as f:
        plan = memory_plan(f.read())
    return {
        "method": plan.method,
        "instructions": plan.num_instructions,
        "buffers": [
            {
                "index": b.index,
                "size": b.size,
                "peak": b.peak_live_bytes,
                "high_water": b.high_water,
                "tensors": [vars(t) for t in b.tensors],
            }
            for b in plan.buffers
        ],
    }


def _gaps(inspector: Inspector) -> Optional[List[Dict[str, Any]]]:
    try:
        mse = inspector.calculate_numeric_gap("MSE")
        snr = inspector.calculate_numeric_gap("SNR")
    except ValueError:
        return None
    rows = []
    for i in range(len(mse)):
        traces = mse["stacktraces"][i]
        source = next((user_frame(t) for t in traces.values() if t), None)
        rows.append(
            {
                "aot_ops": list(mse["aot_ops"][i]),
                "runtime_ops": list(mse["runtime_ops"][i]),
                "mse": max(mse["gap"][i]),
                "snr": min(snr["gap"][i]),
                "source": source,
            }
        )
    return rows


def _finite(value):
    """`value` with infinities as +-1e300 and NaN as None."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return math.copysign(1e300, value)
    return value


def build_report(
    etdump_path: str,
    etrecord_path: Optional[str] = None,
    debug_buffer_path: Optional[str] = None,
    pte_path: Optional[str] = None,
    title: Optional[str] = None,
) -> str:
    """The report page (HTML) of the run recorded in `etdump_path`."""
    inspector = Inspector(
        etdump_path=etdump_path,
        etrecord=etrecord_path,
        debug_buffer_path=debug_buffer_path,
    )
    operators = _operators(inspector)
    executions = [
        e
        for b in inspector.event_blocks
        for e in b.events
        if e.name == "Method::execute" and e.perf_data is not None
    ]
    data = {
        "title": title or os.path.basename(etdump_path),
        "summary": {
            "runs": max((len(e.perf_data.raw) for e in executions), default=0),
            "execute_ms": executions[0].perf_data.avg if executions else None,
            "operators": len(operators),
            "lanes": sorted({row["lane"] for row in operators}),
        },
        "timeline": _timeline(inspector),
        "operators": operators,
        "memory": _memory(pte_path),
        "gaps": _gaps(inspector) if etrecord_path and debug_buffer_path else None,
    }
    with open(_TEMPLATE) as f:
        template = f.read()
    # JSON has no infinities (an SNR of identical values); "</" may not
    # appear inside the script element holding the data.
    payload = json.dumps(_finite(data), default=float).replace("</", "<\\/")
    return template.replace("{{title}}", html.escape(data["title"])).replace(
        "{{data}}", payload
    )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="executorch-devtools-report",
        description="Writes an HTML report (timeline, operator table, memory "
        "plan, numeric gaps) of a run recorded in an ETDump.",
    )
    parser.add_argument("--etdump", required=True, help="the run's ETDump")
    parser.add_argument(
        "--etrecord", help="the program's ETRecord (operators, source lines)"
    )
    parser.add_argument(
        "--debug-buffer",
        help="the run's debug buffer (logged values: numeric gaps vs eager)",
    )
    parser.add_argument("--pte", help="the program (for the memory plan)")
    parser.add_argument("--title", help="the report's title")
    parser.add_argument("-o", "--output", required=True, help="the HTML file to write")
    args = parser.parse_args(argv)
    page = build_report(
        args.etdump, args.etrecord, args.debug_buffer, args.pte, args.title
    )
    with open(args.output, "w") as f:
        f.write(page)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
