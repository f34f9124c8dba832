"""Inspector: an ETDump (what the runtime did) joined with an ETRecord (what
the compiler knew), with upstream ExecuTorch's API.

    inspector = Inspector(etdump_path="run.etdp", etrecord="model.etrecord",
                          debug_buffer_path="run.bin")
    inspector.print_data_tabular()
    df = inspector.to_dataframe()                 # one row per event
    inspector.find_total_for_module("features")   # ms spent in a submodule
    gaps = inspector.calculate_numeric_gap("MSE")  # runtime vs eager per op

Events are grouped into `event_blocks` (one per distinct kind of run, e.g.
"Default" for method loading and "Execute" for its executions); each event
carries timing statistics over the runs (`perf_data`), the logged values
(`debug_data`) and, through the ETRecord, the graph nodes it ran
(`op_types`, `stack_traces`, `module_hierarchy`, `debug_handles`).
"""

import dataclasses
import os
import sys
import warnings
from enum import Enum
from typing import Any, Callable, Dict, IO, List, Optional, Sequence, Union

import numpy as np
import pandas as pd
from torch.export import ExportedProgram

from executorch.devtools.etdump.serialize import (
    ETDumpError,
    deserialize_from_etdump_flatcc,
)
from executorch.devtools.etrecord import ETRecord, parse_etrecord
from executorch.devtools.inspector._events import (
    DebugBufferError,
    RecordedEvent,
    recorded_blocks,
)
from executorch.devtools.inspector._graph import MethodGraph
from executorch.devtools.inspector.numerical_comparator import (
    COMPARATORS,
    NumericalComparatorBase,
)
from executorch.devtools.numeric_debugger import eager_node_values

# Events of the runtime itself, not of any operator.
FRAMEWORK_EVENTS = ("Method::init", "Program::load_method", "Method::execute")
# The time of an instruction including the executor's own work around the
# kernel; the kernel's event (native_call_<op>) is the operator's time.
OPERATOR_CALL = "OPERATOR_CALL"
DELEGATE_CALL = "DELEGATE_CALL"
# Columns and events print_data_tabular leaves out.
_EXCLUDED_COLUMNS = [
    "raw",
    "delegate_debug_identifier",
    "stack_traces",
    "module_hierarchy",
    "debug_data",
]


class TimeScale(Enum):
    NS = "ns"
    US = "us"
    MS = "ms"
    S = "s"
    CYCLES = "cycles"


_NS_PER_UNIT = {
    TimeScale.NS: 1,
    TimeScale.US: 1e3,
    TimeScale.MS: 1e6,
    TimeScale.S: 1e9,
    TimeScale.CYCLES: 1,
}


class PerfData:
    """Durations of one event over the runs (`raw`) and their statistics."""

    def __init__(self, raw: List[float]):
        self.raw = raw

    @property
    def p10(self) -> float:
        return float(np.percentile(self.raw, 10))

    @property
    def p50(self) -> float:
        return float(np.percentile(self.raw, 50))

    @property
    def p90(self) -> float:
        return float(np.percentile(self.raw, 90))

    @property
    def avg(self) -> float:
        return float(np.mean(self.raw))

    @property
    def min(self) -> float:
        return float(min(self.raw))

    @property
    def max(self) -> float:
        return float(max(self.raw))

    def __repr__(self) -> str:
        return f"PerfData(avg={self.avg:.6g}, runs={len(self.raw)})"


@dataclasses.dataclass
class Event:
    """One event of a block: an operator, a delegate call or an event inside
    a delegate, or a framework event.

    name: the runtime's name (e.g. "native_call_convolution.out"), or the
        delegate's identifier for an event inside a delegate.
    perf_data: durations over the runs, in the target time scale.
    op_types: operators of the graph nodes the event ran.
    delegate_debug_identifier: the delegate's id for an event inside it.
    debug_handles: of the graph nodes the event ran.
    num_outputs: values the event produces (for a delegate call, the last
        values of its debug_data are its outputs).
    stack_traces / module_hierarchy: per graph node name.
    is_delegated_op / delegate_backend_name: for events inside delegates.
    debug_data: the values logged while the event ran.
    """

    name: str
    perf_data: Optional[PerfData] = None
    op_types: List[str] = dataclasses.field(default_factory=list)
    delegate_debug_identifier: Optional[Union[int, str]] = None
    debug_handles: Optional[Union[int, Sequence[int]]] = None
    num_outputs: int = 1
    stack_traces: Dict[str, Optional[str]] = dataclasses.field(default_factory=dict)
    module_hierarchy: Dict[str, Any] = dataclasses.field(default_factory=dict)
    is_delegated_op: Optional[bool] = None
    delegate_backend_name: Optional[str] = None
    _delegate_debug_metadatas: List[bytes] = dataclasses.field(default_factory=list)
    debug_data: List[Any] = dataclasses.field(default_factory=list)
    _instruction_id: Optional[int] = None
    _delegate_metadata_parser: Optional[Callable] = None
    _start_time: Optional[List[int]] = None

    @property
    def start_time(self) -> Optional[List[int]]:
        return self._start_time

    @property
    def raw_delegate_debug_metadatas(self) -> List[bytes]:
        return self._delegate_debug_metadatas

    @property
    def delegate_debug_metadatas(self):
        if self.is_delegated_op and self._delegate_metadata_parser is not None:
            return self._delegate_metadata_parser(self._delegate_debug_metadatas)
        return self._delegate_debug_metadatas

    def asdict(self, _units: str = "") -> dict:
        perf = self.perf_data
        stats = {
            f"{name}{_units}": None if perf is None else getattr(perf, name)
            for name in ("p10", "p50", "p90", "avg", "min", "max")
        }
        return {
            "event_name": self.name,
            "raw": [None if perf is None else perf.raw],
            **stats,
            "op_types": [self.op_types],
            "delegate_debug_identifier": self.delegate_debug_identifier,
            "stack_traces": [self.stack_traces],
            "module_hierarchy": [self.module_hierarchy],
            "is_delegated_op": self.is_delegated_op,
            "delegate_backend_name": self.delegate_backend_name,
            "debug_data": [self.debug_data],
            "start_time": [self._start_time],
        }

    def to_dataframe(self, _units: str = "") -> pd.DataFrame:
        return pd.DataFrame(self.asdict(_units))

    def _row(self, units: str) -> dict:
        """asdict() with the one-element lists (DataFrame cells) unwrapped."""
        return {
            key: value[0] if isinstance(value, list) else value
            for key, value in self.asdict(units).items()
        }


@dataclasses.dataclass
class EventBlock:
    """The events of one kind of run (e.g. "Execute"), merged over its
    runs; `run_output` holds the method outputs logged in them,
    `reference_output` the bundled program's expected ones."""

    name: str
    events: List[Event] = dataclasses.field(default_factory=list)
    source_time_scale: TimeScale = TimeScale.NS
    target_time_scale: TimeScale = TimeScale.MS
    bundled_input_index: Optional[int] = None
    run_output: Optional[List[Any]] = None
    reference_output: Optional[List[Any]] = None

    def to_dataframe(
        self, include_units: bool = False, include_delegate_debug_data: bool = False
    ) -> pd.DataFrame:
        units = f" ({self.target_time_scale.value})" if include_units else ""
        frame = pd.DataFrame.from_records(
            [event._row(units) for event in self.events],
            columns=list(Event("").asdict(units)),
        )
        frame.insert(0, "event_block_name", [self.name] * len(self.events))
        if include_delegate_debug_data:
            frame["delegate_debug_metadata"] = [
                e.delegate_debug_metadatas or None for e in self.events
            ]
        return frame


class Inspector:
    """Joins an ETDump with an optional ETRecord. See the module docstring.

    Args:
        etdump_path / etdump_data: the ETDump (a file or its bytes).
        etrecord: an ETRecord or the path of one.
        source_time_scale: the unit of the ETDump's timestamps (the
            runtime's PAL reports nanoseconds by default).
        target_time_scale: the unit of perf_data.
        debug_buffer_path: the debug buffer saved with the ETDump; logged
            tensors are read from it.
        delegate_metadata_parser: turns an event's delegate metadata into
            something readable (Event.delegate_debug_metadatas).
        delegate_time_scale_converter: (event name, time) -> time in the
            target scale, for delegates whose clock differs.
        method_name: the ETRecord method the ETDump ran ("forward").
    """

    def __init__(
        self,
        etdump_path: Optional[str] = None,
        etdump_data: Optional[bytes] = None,
        etrecord: Optional[Union[ETRecord, str]] = None,
        source_time_scale: TimeScale = TimeScale.NS,
        target_time_scale: TimeScale = TimeScale.MS,
        debug_buffer_path: Optional[str] = None,
        delegate_metadata_parser: Optional[Callable] = None,
        delegate_time_scale_converter: Optional[Callable] = None,
        enable_module_hierarchy: bool = False,
        reference_graph_name: str = "edge_dialect_exported_program",
        method_name: str = "forward",
    ) -> None:
        if (etdump_path is None) == (etdump_data is None):
            raise ValueError("give exactly one of etdump_path and etdump_data")
        if (source_time_scale == TimeScale.CYCLES) != (
            target_time_scale == TimeScale.CYCLES
        ):
            raise ValueError("cycles convert only to cycles")
        source = os.fspath(etdump_path) if etdump_path is not None else "ETDump data"
        if etdump_path is not None:
            with open(etdump_path, "rb") as f:
                etdump_data = f.read()
        dump = deserialize_from_etdump_flatcc(etdump_data, source=source)
        buffer = None
        if debug_buffer_path is not None:
            with open(debug_buffer_path, "rb") as f:
                buffer = f.read()
        elif _logs_tensors(dump):
            warnings.warn(
                "the ETDump logged tensors but no debug_buffer_path was given: "
                "their values are not available",
                stacklevel=2,
            )
        self._etrecord = (
            parse_etrecord(etrecord)
            if isinstance(etrecord, (str, os.PathLike))
            else etrecord
        )
        self._source_time_scale = source_time_scale
        self._target_time_scale = target_time_scale
        scale = _NS_PER_UNIT[target_time_scale] / _NS_PER_UNIT[source_time_scale]
        self._graph = (
            MethodGraph(self._etrecord, method_name) if self._etrecord else None
        )
        try:
            recorded = recorded_blocks(dump, buffer, source)
        except DebugBufferError as error:
            raise ETDumpError(f"{debug_buffer_path}: {error}") from None
        self.event_blocks: List[EventBlock] = [
            self._block(
                r, scale, delegate_metadata_parser, delegate_time_scale_converter
            )
            for r in recorded
        ]
        self._reference_outputs = {}
        if self._etrecord is not None and self._etrecord._reference_outputs:
            self._reference_outputs = self._etrecord._reference_outputs
            outputs = self._reference_outputs.get(method_name)
            for block in self.event_blocks:
                index = block.bundled_input_index
                if outputs is not None and index is not None and index < len(outputs):
                    block.reference_output = outputs[index]

    # ------------------------------------------------------------------
    # Building events

    def _block(self, recorded, scale, parser, converter) -> EventBlock:
        events = [self._event(e, scale, parser, converter) for e in recorded.events]
        return EventBlock(
            recorded.name,
            events,
            self._source_time_scale,
            self._target_time_scale,
            recorded.bundled_input_index,
            recorded.run_output,
        )

    def _event(self, recorded: RecordedEvent, scale, parser, converter) -> Event:
        s = recorded.signature
        identifier = s.delegate_id if s.delegate_id is not None else s.delegate_id_str
        delegated = identifier is not None
        name = str(identifier) if delegated else s.name
        if delegated and converter is not None:
            durations = [converter(name, d) for d in recorded.durations]
        else:
            durations = [d / scale for d in recorded.durations]
        event = Event(
            name=name,
            perf_data=PerfData(durations) if durations else None,
            delegate_debug_identifier=identifier,
            is_delegated_op=delegated,
            _delegate_debug_metadatas=(
                recorded.metadata if any(recorded.metadata) else []
            ),
            debug_data=recorded.debug_data,
            _instruction_id=s.instruction_id,
            _delegate_metadata_parser=parser,
            _start_time=recorded.start_times or None,
        )
        if self._graph is not None and s.name not in FRAMEWORK_EVENTS:
            self._attach_graph_nodes(event)
        return event

    def _attach_graph_nodes(self, event: Event) -> None:
        graph = self._graph
        instruction = event._instruction_id
        if instruction is None:
            return
        delegate = graph.delegate_of_instruction(instruction)
        if event.is_delegated_op:
            handles = graph.handles_of_delegate_event(
                instruction, event.delegate_debug_identifier
            )
        else:
            handles = graph.handles_of_instruction(instruction)
        if delegate is not None:
            event.delegate_backend_name = delegate.get("name")
            event.num_outputs = graph.num_outputs(instruction)
        if handles is None:
            return
        event.debug_handles = handles[0] if len(handles) == 1 else handles
        for node in graph.nodes(handles):
            event.op_types.append(node.op_type)
            event.stack_traces[node.name] = node.stack_trace
            event.module_hierarchy[node.name] = node.module_hierarchy

    # ------------------------------------------------------------------
    # Tables

    def to_dataframe(
        self, include_units: bool = True, include_delegate_debug_data: bool = False
    ) -> pd.DataFrame:
        """Every event of every block, one row each."""
        frames = [
            b.to_dataframe(include_units, include_delegate_debug_data)
            for b in self.event_blocks
        ]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def _printable(self, include_units, include_delegate_debug_data) -> pd.DataFrame:
        frame = self.to_dataframe(include_units, include_delegate_debug_data)
        if frame.empty:
            return frame
        frame = frame.drop(columns=[c for c in _EXCLUDED_COLUMNS if c in frame])
        frame = frame[frame["event_name"] != OPERATOR_CALL]
        return frame.reset_index(drop=True)

    def print_data_tabular(
        self,
        file: Optional[IO[str]] = None,
        include_units: bool = True,
        include_delegate_debug_data: bool = False,
    ) -> None:
        """Prints the events (to `file`, by default standard output) as a table (OPERATOR_CALL rows, which repeat
        each operator with the executor's overhead, are left out)."""
        from tabulate import tabulate

        frame = self._printable(include_units, include_delegate_debug_data)
        print(
            tabulate(frame, headers="keys", tablefmt="fancy_grid", showindex=True),
            file=file or sys.stdout,
        )

    def save_data_to_tsv(
        self,
        file: IO[str],
        include_units: bool = True,
        include_delegate_debug_data: bool = False,
    ) -> None:
        self._printable(include_units, include_delegate_debug_data).to_csv(
            file, sep="\t"
        )

    # ------------------------------------------------------------------
    # Queries

    def operator_events(self) -> List[Event]:
        """The events that time operators, each once: kernel calls, and for
        a delegate call either the events inside it, when every one of them
        maps to graph nodes, or else the call itself (e.g. XNNPACK's step
        events, which the delegate map does not name). OPERATOR_CALL
        wrappers and the framework's events are left out."""
        chosen = []
        for block in self.event_blocks:
            unmapped = {
                e._instruction_id
                for e in block.events
                if e.is_delegated_op and e.debug_handles is None
            }
            inner = {
                e._instruction_id for e in block.events if e.is_delegated_op
            } - unmapped
            for event in block.events:
                if event.name in FRAMEWORK_EVENTS or event.name == OPERATOR_CALL:
                    continue
                if event.name == DELEGATE_CALL and event._instruction_id in inner:
                    continue
                if event.is_delegated_op and event._instruction_id in unmapped:
                    continue
                chosen.append(event)
        return chosen

    def find_total_for_module(self, module_name: str) -> float:
        """The summed average time (target time scale) of the operators run
        for module `module_name` and its submodules: its path in the model
        (e.g. "features.3.conv"; "" for the whole model) or its key in the
        nodes' nn_module_stack (e.g. "L__self__features.3.conv")."""
        total = 0.0
        for event in self.operator_events():
            if event.perf_data is None:
                continue
            if any(
                _in_module(hierarchy, module_name)
                for hierarchy in event.module_hierarchy.values()
            ):
                total += event.perf_data.avg
        return total

    def get_exported_program(
        self, graph: Optional[str] = None
    ) -> Optional[ExportedProgram]:
        """The ETRecord's Edge program, or the program recorded as `graph`
        ("exported_program" or an extra program's name)."""
        if self._etrecord is None:
            warnings.warn("no ETRecord was given to the Inspector", stacklevel=2)
            return None
        if graph is None:
            return self._graph.program
        if graph == "exported_program":
            return self._etrecord.exported_program
        graph_map = self._etrecord.graph_map or {}
        return graph_map.get(graph, graph_map.get(f"{graph}/forward"))

    # ------------------------------------------------------------------
    # Numerics

    def _runtime_values(self) -> Dict[tuple, tuple]:
        """(debug handles) -> (runtime value, op names, instruction), from
        events that logged values, one per instruction."""
        values = {}
        for event in self.operator_events():
            if not event.debug_data or event.debug_handles is None:
                continue
            handles = event.debug_handles
            handles = (handles,) if isinstance(handles, int) else tuple(handles)
            data = event.debug_data
            if event.name == DELEGATE_CALL:
                # Inputs come first; the last num_outputs values are outputs.
                data = data[-event.num_outputs :]
            value = data[0] if len(data) == 1 else list(data)
            values[handles] = (value, [event.name], event._instruction_id)
        return values

    def calculate_numeric_gap(
        self,
        distance: Union[str, NumericalComparatorBase] = "MSE",
        disable_debug_handle_valdiation: bool = False,
        reference_graph: Optional[str] = None,
    ) -> pd.DataFrame:
        """Compares each operator's runtime output (logged in the ETDump at
        the intermediate-outputs debug level) with the eager value of the
        same Edge node, run on the ETRecord's representative inputs (the
        bundled test case the runtime ran, or the program's example inputs).

        `distance` is "MSE", "L1", "SNR" or a NumericalComparatorBase. Rows
        follow execution order: aot_ops / runtime_ops name the operators,
        gap holds one distance per output, stacktraces the source of each
        node.
        """
        if self._etrecord is None:
            raise ValueError("calculate_numeric_gap needs an ETRecord")
        if reference_graph not in (None, "edge_dialect_exported_program"):
            program = self.get_exported_program(reference_graph)
            if program is None:
                raise ValueError(f"the ETRecord has no graph {reference_graph!r}")
        graph = self._graph
        inputs = self._etrecord._representative_inputs
        if inputs is None:
            example = graph.program.example_inputs
            inputs = list(example[0]) if example else None
        if inputs is None:
            raise ValueError(
                "the ETRecord has no representative inputs (bundle the program "
                "or call ETRecord.update_representative_inputs)"
            )
        if isinstance(distance, NumericalComparatorBase):
            comparator = distance
            comparator.inspector = comparator.inspector or self
        else:
            name = distance.strip().upper()
            if name not in COMPARATORS:
                raise ValueError(
                    f"unknown distance {distance!r}: use one of {sorted(COMPARATORS)} "
                    "or a NumericalComparatorBase"
                )
            comparator = COMPARATORS[name](self)
        eager = eager_node_values(graph.program, inputs)
        mapping, aot_names, runtime_names, traces = {}, {}, {}, {}
        ordered = sorted(self._runtime_values().items(), key=lambda kv: kv[1][2])
        for handles, (runtime_value, names, _) in ordered:
            outputs = graph.outputs_of(handles)
            if not outputs:
                continue
            aot_value = (
                eager[outputs[0].name]
                if len(outputs) == 1
                else [eager[n.name] for n in outputs]
            )
            if isinstance(aot_value, list):
                aot_value = tuple(aot_value)
            mapping[(handles, aot_value)] = (handles, runtime_value)
            aot_names[handles] = [n.name for n in outputs]
            runtime_names[handles] = names
            traces[handles] = {n.name: n.stack_trace for n in outputs}
        frame = comparator.compare(mapping, aot_names, runtime_names)
        if len(frame):
            frame["stacktraces"] = [traces[h] for h in frame["aot_debug_handle"]]
        return frame


def _in_module(hierarchy: Optional[Dict[str, Any]], module_name: str) -> bool:
    for key, value in (hierarchy or {}).items():
        path = value[0] if isinstance(value, (tuple, list)) else str(value)
        if (
            key == module_name
            or path == module_name
            or path.startswith(module_name + ".")
        ):
            return True
    return False


def _logs_tensors(dump) -> bool:
    return any(
        e.debug_event is not None
        and e.debug_event.debug_entry.val in ("Tensor", "TensorList")
        for run in dump.run_data
        for e in (run.events or [])
    )
