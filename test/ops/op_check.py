"""Checks one operator at one dtype on our runtime against eager PyTorch.

A check wraps the operator in a one-op `nn.Module` (tensor arguments become
the module's inputs, every other argument is baked into the module), exports
it with `torch.export`, lowers it with `to_edge` (an operator outside
Core ATen is put in the exception list and preserved from decomposition) and `to_executorch`, runs the
program through the Python bindings and compares every output with eager
PyTorch on the same inputs. Several samples of one (operator, dtype) share a
module (one call each) so a passing case costs one export; when that module
does not pass, each sample is checked alone so the reason names the sample.

Outcomes:
- PASS: outputs match (same dtype, same shape, values within tolerance).
- FAIL: missing kernel, lowering error, load error, run error, or mismatch
  (with the largest absolute difference).
- UNSUPPORTED: eager PyTorch rejects the operator at this dtype on CPU.
- EXPORT: torch.export or the Edge lowering replaced the operator, so the
  one-op program does not exercise its kernel; the detail says what it
  became. Also when torch cannot export the sample at all (torch.export or
  its own Core ATen decomposition raises).

Tolerances are the staged harness's table (executorch.backends.test.harness)
at its "one_op" precision, where the reasoning is written: integer and bool
results exact, floating results within (rtol, atol) per dtype, applied as
|actual - expected| <= atol + rtol * |expected| in double precision, with
NaN equal to NaN and infinities equal only to themselves.

Operators with random or uninitialised results (rand, dropout, empty, ...)
are checked on output count, dtypes and shapes; the caller says which.
Random ones are also checked by their properties (test/ops/random_check.py:
range, moments, permutation, dropout scaling).
For sort, topk and max/min.dim, whose indices of equal values may come in
any order, an index output passes when it picks eager's values from the
input.
"""

import dataclasses
import re
from typing import Any, List, Optional, Sequence

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.tester import ONE_OP, TOLERANCES
from executorch.exir import EdgeCompileConfig
from executorch.exir.kernel_check import MissingKernelError
from executorch.test.ops.random_check import check_properties

PASS, FAIL, UNSUPPORTED, EXPORT = "pass", "fail", "unsupported", "export"
MISSING_KERNEL = "missing kernel: "


def _widened(t: torch.Tensor) -> torch.Tensor:
    """`t` in double precision, complex kept complex."""
    return t.to(torch.complex128) if t.is_complex() else t.double()


@dataclasses.dataclass
class Sample:
    """Arguments of one operator call; tensors anywhere inside `args` and
    `kwargs` (also in lists) become inputs of the exported module."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    # Export every dimension of the inputs as dynamic (up to 64), so size
    # queries (sym_size) stay in the graph instead of becoming constants.
    dynamic: bool = False

    def describe(self) -> str:
        """A short signature such as `(f32[2, 3], f32[3], alpha=2)`."""

        def show(value: Any) -> str:
            if isinstance(value, torch.Tensor):
                return f"{_short_dtype(value.dtype)}{list(value.shape)}"
            if isinstance(value, (list, tuple)):
                return "[" + ", ".join(show(v) for v in value) + "]"
            return repr(value)

        parts = [show(a) for a in self.args]
        parts += [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


@dataclasses.dataclass
class Outcome:
    """The result of checking one (operator, dtype)."""

    status: str
    detail: str = ""


def _short_dtype(dtype: torch.dtype) -> str:
    return {
        torch.bool: "b8",
        torch.uint8: "u8",
        torch.int8: "i8",
        torch.int16: "i16",
        torch.int32: "i32",
        torch.int64: "i64",
        torch.float16: "f16",
        torch.bfloat16: "bf16",
        torch.float32: "f32",
        torch.float64: "f64",
    }.get(dtype, str(dtype).replace("torch.", ""))


def _first_line(error: BaseException, limit: int = 240) -> str:
    text = str(error).strip().splitlines()
    message = text[0] if text else ""
    return f"{type(error).__name__}: {message}"[:limit]


class OneOp(torch.nn.Module):
    """Calls `op` once per sample; the samples' tensors, in order, are the
    module's inputs and every other argument is a constant."""

    def __init__(self, op, samples: Sequence[Sample]):
        super().__init__()
        self.op = op
        self.calls = []
        self.example_inputs: List[torch.Tensor] = []
        for sample in samples:
            leaves, spec = tree_flatten((sample.args, sample.kwargs))
            positions = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
            for i in positions:
                self.example_inputs.append(leaves[i].detach().contiguous().clone())
                leaves[i] = None
            self.calls.append((spec, leaves, positions))

    def forward(self, *tensors):
        remaining = iter(tensors)
        results = []
        for spec, leaves, positions in self.calls:
            filled = list(leaves)
            for i in positions:
                filled[i] = next(remaining)
            args, kwargs = tree_unflatten(filled, spec)
            results.append(self.op(*args, **kwargs))
        return tuple(results)

    def fresh_inputs(self) -> tuple:
        return tuple(t.clone() for t in self.example_inputs)


def op_name(op) -> str:
    """`namespace::name.overload` of an OpOverload or Edge operator."""
    schema = op._schema
    return f"{schema.name}.{schema.overload_name or 'default'}"


def edge_forms(op) -> set:
    """Names under which `op` may appear in an Edge program: itself, its
    `*_copy` form when it is a view, its dim-order form for layout copies."""
    name = op_name(op)
    base, overload = name.split(".", 1)
    forms = {name, f"{base}_copy.{overload}"}
    if name == "aten::_to_copy.default":
        forms.add("dim_order_ops::_to_dim_order_copy.default")
    if name == "aten::clone.default":
        forms.add("dim_order_ops::_clone_dim_order.default")
    if name == "aten::empty.memory_format":
        forms.add("dim_order_ops::_empty_dim_order.default")
    return forms


def _edge_operators(edge_program) -> List[str]:
    graph = edge_program.exported_program().graph
    return [
        op_name(node.target)
        for node in graph.nodes
        if node.op == "call_function" and hasattr(node.target, "_schema")
    ]


def _mismatch(expected: torch.Tensor, actual: torch.Tensor) -> Optional[str]:
    """Why `actual` differs from `expected` (same dtype and shape), or None."""
    if expected.numel() == 0:
        return None
    if expected.dtype not in TOLERANCES:
        if torch.equal(expected, actual):
            return None
        close = expected == actual
    else:
        rtol, atol = TOLERANCES[expected.dtype][ONE_OP]
        close = torch.isclose(
            _widened(actual),
            _widened(expected),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )
        if bool(close.all()):
            return None
    where = (~close).nonzero()[0].tolist()
    diff = (_widened(actual) - _widened(expected)).abs()
    max_diff = diff[~close].nan_to_num(nan=float("inf")).max().item()
    return (
        f"max abs diff {max_diff:.3g} ({int((~close).sum())}/{close.numel()} "
        f"elements differ; at {where}: expected {expected[tuple(where)].item()!r}, "
        f"got {actual[tuple(where)].item()!r})"
    )


# Operators returning (values, indices) whose indices for equal values may
# come in any order (the schema promises no stability).
TIED_INDEX_OPERATORS = {
    "aten::sort.default",
    "aten::topk.default",
    "aten::max.dim",
    "aten::min.dim",
}


def _argument(op, sample: Sample, name: str):
    """The value of argument `name` in `sample`, or its schema default."""
    for position, argument in enumerate(op._schema.arguments):
        if argument.name == name:
            if position < len(sample.args):
                return sample.args[position]
            return sample.kwargs.get(name, argument.default_value)
    raise KeyError(name)


def _accept_tied_indices(op, samples: Sequence[Sample], expected, actual) -> list:
    """Eager's outputs (flat), with each sample's indices replaced by the
    runtime's wherever those pick exactly eager's values from the input:
    ties may legitimately resolve to either index."""
    adjusted = tree_flatten(expected)[0]
    for k, sample in enumerate(samples):
        source, dim = sample.args[0], _argument(op, sample, "dim")
        values, indices = adjusted[2 * k], actual[2 * k + 1]
        if (
            source.dim() == 0
            or not isinstance(indices, torch.Tensor)
            or indices.shape != adjusted[2 * k + 1].shape
            or indices.dtype != torch.long
        ):
            continue
        dim = dim % source.dim()
        if indices.dim() < source.dim():
            indices, values = indices.unsqueeze(dim), values.unsqueeze(dim)
        if indices.numel() and (
            int(indices.min()) < 0 or int(indices.max()) >= source.shape[dim]
        ):
            continue
        picked = source.gather(dim, indices)
        same = picked == values
        if picked.is_floating_point():
            same |= picked.isnan() & values.isnan()
        if bool(same.all()):
            adjusted[2 * k + 1] = actual[2 * k + 1]
    return adjusted


def compare(
    expected: Any, actual: Sequence[Any], properties_only: bool
) -> Optional[str]:
    """Why the runtime's outputs differ from eager's, or None when they
    match. `expected` is the eager result (a tuple per sample, any nesting);
    `actual` the runtime's flat output list."""
    expected_leaves = tree_flatten(expected)[0]
    if len(expected_leaves) != len(actual):
        return f"{len(actual)} outputs, eager gives {len(expected_leaves)}"
    for index, (want, got) in enumerate(zip(expected_leaves, actual)):
        if not isinstance(want, torch.Tensor):
            if isinstance(got, torch.Tensor) or (
                not properties_only
                and want != got
                and not (want != want and got != got)
            ):
                return f"output {index}: expected {want!r}, got {got!r}"
            continue
        if not isinstance(got, torch.Tensor):
            return f"output {index}: expected a tensor, got {type(got).__name__}"
        if got.dtype != want.dtype:
            return f"output {index}: dtype {got.dtype}, eager gives {want.dtype}"
        if got.shape != want.shape:
            return f"output {index}: shape {list(got.shape)}, eager gives {list(want.shape)}"
        if not properties_only:
            reason = _mismatch(want, got)
            if reason:
                return f"output {index}: {reason}"
    return None


def _torch_decomposes(module: OneOp, shapes) -> bool:
    """Whether torch's own Core ATen decomposition of the module succeeds:
    when it fails too (resize_ of an input), the sample cannot be exported
    by anyone and is no failure of ours."""
    try:
        exported = torch.export.export(
            module, module.fresh_inputs(), dynamic_shapes=shapes
        )
        exported.run_decompositions()
    except Exception:
        return False
    return True


def _check_together(
    op, samples: Sequence[Sample], properties_only: bool, preserve: bool = False
) -> Outcome:
    """Exports, lowers and runs one module calling `op` on every sample.
    When the Core ATen decomposition rewrites a core operator, the outcome
    is EXPORT, and its detail also says how the kernel fares with the
    operator preserved from decomposition (`preserve`), as a program from
    another exporter may still call it."""
    module = OneOp(op, samples)
    expected = module(*module.fresh_inputs())
    shapes = None
    if any(sample.dynamic for sample in samples):
        # forward takes *tensors: one entry holding a spec per tensor.
        shapes = (
            tuple(
                {d: torch.export.Dim(f"in{k}_{d}", max=64) for d in range(t.dim())}
                for k, t in enumerate(module.example_inputs)
            ),
        )
    core = hasattr(op, "tags") and torch.Tag.core in op.tags
    keep = [op] if preserve or not core else []
    config = EdgeCompileConfig(_core_aten_ops_exception_list=keep, _preserve_ops=keep)
    tester = Tester(module, module.fresh_inputs(), shapes, config)
    try:
        tester.export()
    except Exception as error:
        return Outcome(EXPORT, f"torch.export failed: {_first_line(error)}")
    try:
        edge = tester.to_edge().get_artifact()
    except Exception as error:
        if not _torch_decomposes(module, shapes):
            return Outcome(
                EXPORT, f"torch's run_decompositions failed: {_first_line(error)}"
            )
        return Outcome(FAIL, f"to_edge error: {_first_line(error)}")
    operators = _edge_operators(edge)
    forms = edge_forms(op)
    if sum(name in forms for name in operators) < len(samples):
        became = sorted(set(operators) - forms) or ["nothing (folded to constants)"]
        detail = "became " + ", ".join(became)
        if core and not preserve:
            kept = _check_together(op, samples, properties_only, preserve=True)
            if kept.status != EXPORT:
                detail += f"; preserved from decomposition: {kept.status} {kept.detail}"
        return Outcome(EXPORT, detail.strip())
    try:
        tester.to_executorch().serialize()
    except MissingKernelError as error:
        missing = re.findall(r"^  (\S+) \(method", str(error), flags=re.MULTILINE)
        return Outcome(FAIL, MISSING_KERNEL + ", ".join(sorted(set(missing))))
    except Exception as error:
        return Outcome(FAIL, f"to_executorch error: {_first_line(error)}")
    try:
        tester.load()
    except Exception as error:
        return Outcome(FAIL, f"load error: {_first_line(error)}")
    try:
        actual = tester.run_method("forward", module.fresh_inputs())
    except Exception as error:
        # The bindings load a method lazily, on its first run.
        stage = "load" if "Loading method" in str(error) else "run"
        return Outcome(FAIL, f"{stage} error: {_first_line(error)}")
    if op_name(op) in TIED_INDEX_OPERATORS:
        expected = _accept_tied_indices(op, samples, expected, actual)
    reason = compare(expected, actual, properties_only)
    if reason:
        return Outcome(FAIL, f"mismatch: {reason}")
    if properties_only:
        reason = check_properties(
            op_name(op), samples, _split_by_sample(expected, actual)
        )
        if reason:
            return Outcome(FAIL, f"property violated: {reason}")
    return Outcome(PASS)


def _split_by_sample(expected: Sequence[Any], actual: Sequence[Any]) -> list:
    """The runtime's flat outputs grouped per sample, as eager's result
    (one entry per sample) nests them."""
    groups, start = [], 0
    for result in expected:
        count = len(tree_flatten(result)[0])
        groups.append(list(actual[start : start + count]))
        start += count
    return groups


def check(
    op,
    samples: Sequence[Sample],
    properties_only: bool = False,
    known_missing: Optional[str] = None,
    preserve: bool = False,
) -> Outcome:
    """Checks `op` on `samples` (all of one dtype) against eager PyTorch.

    `known_missing` is a missing-kernel outcome this operator already had
    at another dtype: the export-time kernel check goes by operator name,
    so once eager accepts the samples the same failure is reported without
    lowering again. `preserve` keeps a core operator out of the Core ATen
    decomposition, to check its kernel.
    """
    runnable, eager_error = [], None
    for sample in samples:
        try:
            module = OneOp(op, [sample])
            module(*module.fresh_inputs())
            runnable.append(sample)
        except Exception as error:
            eager_error = eager_error or error
    if not runnable:
        if eager_error is None:
            return Outcome(UNSUPPORTED, "no sample input")
        return Outcome(UNSUPPORTED, f"eager raises {_first_line(eager_error)}")
    if known_missing:
        return Outcome(FAIL, known_missing)
    outcome = _check_together(op, runnable, properties_only, preserve)
    if outcome.status == PASS:
        return outcome
    sample_specific = outcome.status == EXPORT or outcome.detail.startswith(
        ("run error", "mismatch")
    )
    if not sample_specific:
        return outcome
    if len(runnable) == 1:
        outcome.detail += f" [sample {runnable[0].describe()}]"
        return outcome
    singles = [
        (s, _check_together(op, [s], properties_only, preserve)) for s in runnable
    ]
    failed = [(s, o) for s, o in singles if o.status == FAIL]
    exported = [(s, o) for s, o in singles if o.status == EXPORT]
    if failed:
        sample, single = failed[0]
        return Outcome(
            FAIL,
            f"{single.detail} [sample {sample.describe()}; "
            f"{len(failed)}/{len(singles)} samples fail]",
        )
    if len(exported) == len(singles):
        return Outcome(EXPORT, exported[0][1].detail)
    note = "; ".join(f"{s.describe()} {o.detail}" for s, o in exported)
    return Outcome(PASS, f"export changed some samples: {note}" if note else "")
