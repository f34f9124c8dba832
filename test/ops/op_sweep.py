"""The full operator sweep in one command (`executorch-op-sweep`).

Checks every Core ATen operator (plus the Edge operators our exporter emits
and the non-core operators functions.yaml has kernels for) at every dtype
from Bool to Double on our runtime against eager PyTorch (see
test/ops/op_check.py for the method and tolerances), prints a summary and
how long it took, and writes the operator x dtype coverage table (in a
checkout, docs/kernel_coverage.md; else kernel_coverage.md here).

    executorch-op-sweep                         # full sweep, 2 workers
    executorch-op-sweep --only add --output /tmp/t.md

It checks the Python extension as currently built or installed
(scripts/setup.sh rebuilds a checkout's). OpInfo samples need the
`expecttest` package.
"""

import argparse
import collections
import datetime
import os
import sys
import time
from typing import List, Optional

import torch

from executorch.exir.dialects.edge.dtype_table import DTYPES
from executorch.exir.kernel_check import KernelLibrary
from executorch.extension.progress import ProgressBar
from executorch.extension.pybindings.portable_lib import _get_operator_names
from executorch.test.ops.op_check import EXPORT, FAIL, PASS, UNSUPPORTED
from executorch.test.ops.op_samples import opinfo_index, targets
from executorch.test.ops.random_check import PROPERTY_CHECKS
from executorch.test.ops.sweep_runner import NO_SAMPLE, run_sweep

# OpInfos (best first) whose samples feed one operator; they also decide
# which dtypes PyTorch supports when none of their samples reaches it.
OPINFOS_PER_OPERATOR = 3
# The checkout's docs/ when run from one (this file is test/ops/op_sweep.py).
CHECKOUT_DOCS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "docs"
)
SYMBOLS = {PASS: "✓", FAIL: "✗", UNSUPPORTED: "—", EXPORT: "e", NO_SAMPLE: "?"}
LEGEND = {
    PASS: "passes: runtime output matches eager within the dtype's tolerance",
    FAIL: "fails: missing kernel, lowering/load/run error, crash or mismatch (see Failures)",
    UNSUPPORTED: "not supported by PyTorch: eager raises, or OpInfo lists no such dtype",
    EXPORT: "export changes the operator, so a one-op program cannot reach its kernel "
    "(see Export changes)",
    NO_SAMPLE: "no sample input: no OpInfo reaches this overload and none is written by hand",
}


# Why an operator cannot pass here yet, for the table's notes (listed when
# the operator does not pass on Float or shows these failures).
KNOWN_LIMITS = {
    "aten::resize_.default": "torch.export leaves resize_ of a graph input "
    "in the graph without recording the mutation, and torch's own "
    "functionalization (run_decompositions) rejects it, so samples that "
    "change the input's shape cannot be exported by anyone; the others pass",
    "aten::_local_scalar_dense.default": "Bool: runs (the sym_ite prim op); "
    "other dtypes pass",
    "aten::native_layer_norm_backward.default": "Half: eager's grad_weight "
    "differs from ours (summed in double, rounded once) by up to two half "
    "ulps",
    "aten::convolution_backward.default": "Half, BFloat16: eager rounds "
    "partial sums to the 16-bit type; ours sums in float and rounds once",
    "aten::upsample_bilinear2d.vec": "Byte: eager's uint8 kernel uses "
    "fixed-point weights and rounds between its horizontal and vertical "
    "passes; ours interpolates in float and rounds once (off by at most 1)",
    "aten::_embedding_bag.default": "BFloat16: eager returns an empty "
    "offset2bag in sum mode while its shape function (which the exporter "
    "plans by) gives one entry per index; our kernel fills the planned size",
    "aten::_embedding_bag_forward_only.default": "BFloat16: as " "_embedding_bag",
    "aten::_native_batch_norm_legit.default": "training with running "
    "statistics exports as core operators (var_mean is decomposed into "
    "var.correction and mean.dim); the program cannot keep the operator itself "
    "because functionalization rewrites its running-stat mutation",
}


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="executorch-op-sweep", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="worker processes (default 2)"
    )
    parser.add_argument(
        "--only", action="append", help="check operators containing this"
    )
    parser.add_argument(
        "--output",
        default=os.path.join(CHECKOUT_DOCS, "kernel_coverage.md")
        if os.path.isdir(CHECKOUT_DOCS)
        else "kernel_coverage.md",
        help="where to write the coverage table",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bar"
    )
    return parser.parse_args(argv)


def _table(results, target_list, seconds: float, unbuilt: list) -> str:
    dtypes = list(DTYPES)
    totals = collections.Counter(
        o.status for row in results.values() for o in row.values()
    )
    core_float_fail = [
        t.name
        for t in target_list
        if t.group == "core" and results[t.name]["Float"].status != PASS
    ]
    # Of those: PyTorch has no Float version, or export rewrites the operator
    # and its kernel passes when the operator is preserved.
    no_float = [n for n in core_float_fail if results[n]["Float"].status == UNSUPPORTED]
    kernel_passes = [
        n
        for n in core_float_fail
        if results[n]["Float"].status == EXPORT
        and "preserved from decomposition: pass" in results[n]["Float"].detail
    ]
    # Or no program torch.export makes keeps the operator: it is folded to
    # constants, functionalized into another operator, or cannot be
    # exported at all, with or without the Core ATen decomposition.
    never_kept = [
        n
        for n in core_float_fail
        if results[n]["Float"].status == EXPORT
        and "preserved from decomposition" not in results[n]["Float"].detail
    ]
    really_failing = sorted(
        set(core_float_fail) - set(no_float) - set(kernel_passes) - set(never_kept)
    )
    lines = [
        "# Portable kernel coverage",
        "",
        "Generated by `executorch-op-sweep` (method and tolerances: "
        "`test/ops/op_check.py`); do not edit by hand.",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- torch {torch.__version__}; sweep took {seconds / 60:.1f} min",
        f"- {len(target_list)} operators x {len(dtypes)} dtypes: "
        + ", ".join(f"{totals[s]} {s}" for s in SYMBOLS),
        f"- Core operators not passing on Float: {len(core_float_fail)} "
        f"({len(no_float)} not supported by PyTorch on Float; "
        f"{len(kernel_passes)} rewritten by export whose kernel passes when "
        f"preserved; {len(never_kept)} that no torch.export program keeps "
        "(folded, functionalized or not exportable; see Export changes): "
        + (", ".join(f"`{n}`" for n in never_kept) or "none")
        + f"; {len(really_failing)} others: "
        + (", ".join(f"`{n}`" for n in really_failing) or "none")
        + ")",
        f"- Kernels in the YAML but not in the built extension: "
        f"{', '.join(unbuilt) or 'none'}",
        "",
        "Legend: " + "; ".join(f"{SYMBOLS[s]} {LEGEND[s]}" for s in SYMBOLS) + ".",
        "",
        "Groups: core = tagged `torch.Tag.core`; edge = emitted by our exporter "
        "(`*_copy` views, dim-order copies); non-core = other operators with "
        "a kernel in kernels/portable/functions.yaml.",
        "",
        "| Operator | Group | " + " | ".join(dtypes) + " |",
        "|---|---|" + "---|" * len(dtypes),
    ]
    for t in target_list:
        cells = [SYMBOLS[results[t.name][d].status] for d in dtypes]
        lines.append(f"| `{t.name}` | {t.group} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Checked by properties",
        "",
        "Random operators draw from our own generator, so their values cannot "
        "match eager; a ✓ means their outputs have the right dtypes and shapes "
        "and these properties (test/ops/random_check.py):",
        "",
    ]
    lines += [
        f"- `{name}`: {what}" for name, (_, what) in sorted(PROPERTY_CHECKS.items())
    ]
    noted = [
        n
        for n in sorted(KNOWN_LIMITS)
        if n in results and any(o.status in (FAIL, EXPORT) for o in results[n].values())
    ]
    lines += ["", "## Notes", ""]
    lines += [f"- `{n}`: {KNOWN_LIMITS[n]}" for n in noted] or ["- none"]
    for title, status in (("Failures", FAIL), ("Export changes", EXPORT)):
        lines += ["", f"## {title}", ""]
        for t in target_list:
            by_detail = collections.defaultdict(list)
            for d in dtypes:
                if results[t.name][d].status == status:
                    by_detail[results[t.name][d].detail].append(d)
            for detail, names in by_detail.items():
                lines.append(f"- `{t.name}` ({', '.join(names)}): {detail}")
    return "\n".join(lines) + "\n"


def _unbuilt_kernels() -> list:
    """Kernel YAML entries the built extension does not register (a stale
    build: rerun scripts/setup.sh)."""
    built = set(_get_operator_names())
    return sorted(KernelLibrary.portable().operator_names - built)


def main(argv: Optional[List[str]] = None) -> int:
    args = _parse_args(argv)
    started = time.monotonic()
    unbuilt = _unbuilt_kernels()
    if unbuilt:
        print(
            f"[op_sweep] warning: the extension lacks {len(unbuilt)} kernels "
            f"listed in the YAML (stale build?): {', '.join(unbuilt)}"
        )
    target_list = [
        t for t in targets() if not args.only or any(s in t.name for s in args.only)
    ]
    print(
        f"[op_sweep] {len(target_list)} operators; indexing OpInfo samples", flush=True
    )
    try:
        index = opinfo_index()
    except ModuleNotFoundError as error:
        print(
            f"[op_sweep] PyTorch's OpInfo database needs {error.name}: "
            f"{sys.executable} -m pip install {error.name}"
        )
        return 1
    tasks = [
        {
            "name": t.name,
            "source": t.source,
            "opinfos": index.get(t.source, [])[:OPINFOS_PER_OPERATOR],
            "dtypes": list(DTYPES),
        }
        for t in target_list
    ]
    results = collections.defaultdict(dict)
    done = collections.Counter()

    bar = ProgressBar(len(tasks) * len(DTYPES), "op_sweep", args.quiet)

    def on_result(name, dtype, outcome):
        results[name][dtype] = outcome
        done[name] += 1
        bar.begin(f"{name} {dtype}")
        bar.step()
        if done[name] == len(DTYPES):
            row = " ".join(SYMBOLS[results[name][d].status] for d in DTYPES)
            bar.write(f"[op_sweep] {len(done):4d}/{len(tasks)} {row}  {name}")

    with bar:
        run_sweep(tasks, args.jobs, on_result)
    seconds = time.monotonic() - started
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(_table(results, target_list, seconds, unbuilt))
    totals = collections.Counter(
        o.status for row in results.values() for o in row.values()
    )
    print(
        f"[op_sweep] {sum(totals.values())} checks: "
        + ", ".join(f"{totals[s]} {s}" for s in SYMBOLS)
    )
    for t in target_list:
        for d in ("Float", "Long", "Bool"):
            outcome = results[t.name][d]
            if t.group == "core" and outcome.status in (FAIL, NO_SAMPLE):
                print(
                    f"[op_sweep] core {d} {outcome.status}: {t.name}: {outcome.detail}"
                )
    print(
        f"[op_sweep] wrote {args.output}; took {seconds:.0f} s ({seconds / 60:.1f} min)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
