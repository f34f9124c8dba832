"""Finds the first operator whose result on the runtime departs from eager
PyTorch, and the line of Python that produced it.

The Edge program is run node by node in eager PyTorch to record every
intermediate value. The emitted program is then stepped through the C++
runtime one instruction at a time; after each kernel call its result is read
from the method's value table (before later instructions reuse the memory)
and compared with the eager value of the graph node the call came from, or,
with `same_inputs`, with the node rerun in eager on the runtime's own values
of its inputs.
"""

import dataclasses
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from executorch.exir import EdgeProgramManager, ExecutorchProgramManager
from executorch.exir._serialize._flatbuffer import InstructionArguments
from executorch.extension.pybindings import portable_lib

# Default (atol, rtol) per dtype: one rounding step of the dtype, scaled for
# kernels that sum in another order than eager does. Integer and bool
# results must match exactly.
_TOLERANCES = {
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 2e-2),
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-8, 1e-8),
}

_TORCH_DIR = os.path.dirname(torch.__file__)


@dataclasses.dataclass
class OpComparison:
    """How one kernel call's result compares with eager."""

    instruction: int
    operator: str
    node: str
    # The innermost frame of user code that produced the node, as
    # "file:line in function: code"; None when the program has no trace.
    source: Optional[str]
    matches: bool
    # What differs, e.g. "max abs diff 0.5 at [0, 3]: eager 1.0, runtime 1.5
    # (2 of 12 elements differ; atol 0.0001, rtol 0.0001)".
    detail: str


@dataclasses.dataclass
class DivergenceReport:
    """Every kernel call of one run, compared with eager, in execution
    order."""

    method_name: str
    comparisons: List[OpComparison]

    @property
    def first_divergence(self) -> Optional[OpComparison]:
        return next((c for c in self.comparisons if not c.matches), None)

    def __str__(self) -> str:
        first = self.first_divergence
        head = (
            f"method '{self.method_name}': {len(self.comparisons)} kernel calls "
            "compared with eager"
        )
        if first is None:
            return head + "; all match"
        lines = [
            head,
            f"first divergence at instruction {first.instruction}: "
            f"{first.operator} (graph node '{first.node}')",
            f"  source: {first.source or 'unknown (no stack trace)'}",
            f"  {first.detail}",
        ]
        return "\n".join(lines)


def find_first_divergence(
    edge_program: EdgeProgramManager,
    inputs: Sequence[Any],
    method_name: str = "forward",
    executorch_program: Optional[ExecutorchProgramManager] = None,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
    same_inputs: bool = False,
) -> DivergenceReport:
    """Runs `method_name` of `executorch_program` (by default
    `edge_program.to_executorch()`) on the runtime with `inputs`, comparing
    each kernel call's result with the eager result of the Edge graph node
    it was emitted from. `atol` and `rtol` override the per-dtype defaults
    for floating-point results.

    With `same_inputs`, each node is recomputed in eager from the runtime's
    own results of the earlier kernel calls it reads, so each call is judged
    on its own: a difference an earlier call made within tolerance (a
    quantize rounding a near-tie the other way after fp32 sums in another
    order) is not passed on and blamed on every later call. That is the
    check for deep quantized models, whose end-to-end outputs such a flip
    moves by many steps.

    Kernel calls whose node has no eager counterpart (nodes added after the
    Edge dialect) are skipped; delegate calls are checked through the kernel
    calls that consume their outputs."""
    if executorch_program is None:
        executorch_program = edge_program.to_executorch()
    exported = edge_program.exported_program(method_name)
    expected = eager_node_values(exported, inputs)
    nodes = {node.name: node for node in exported.graph.nodes}
    forced = _SameInputs(expected)
    plan = _plan(executorch_program, method_name)
    sources = iter(executorch_program.instruction_sources(method_name))
    source_of = {
        index: next(sources)
        for index, instruction in enumerate(plan.chains[0].instructions)
        if instruction.instrArgsType == InstructionArguments.KernelCall
    }

    program = portable_lib._load_program_from_buffer(executorch_program.buffer)
    method = program.load_method(method_name)
    method.set_inputs(list(inputs))
    comparisons = []
    for index, instruction in _step_through(method, plan.chains[0].instructions):
        source = source_of.get(index)
        if source is None or source.node not in expected:
            continue
        result = method.get_value(instruction.instrArgs.args[-1])
        if same_inputs:
            reference = forced.recompute(nodes[source.node])
            forced.runtime_results[source.node] = result
        else:
            reference = expected[source.node]
        matches, detail = _compare(reference, result, atol, rtol)
        comparisons.append(
            OpComparison(
                instruction=index,
                operator=source.operator,
                node=source.node,
                source=user_frame(source.stack_trace),
                matches=matches,
                detail=detail,
            )
        )
    return DivergenceReport(method_name, comparisons)


def eager_node_values(
    program: ExportedProgram, inputs: Sequence[Any]
) -> Dict[str, Any]:
    """The eager value of every node of `program`'s graph, by node name,
    when run on `inputs` (the user inputs, in order)."""
    user_inputs = iter(inputs)
    args = []
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(next(user_inputs))
        elif spec.target in program.state_dict:
            args.append(program.state_dict[spec.target])
        else:
            args.append(program.constants[spec.target])

    values: Dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            values[node.name] = result
            return result

    with torch.no_grad():
        Recorder(program.graph_module).run(*args)
    return values


class _SameInputs:
    """Eager values of the graph's nodes computed from the runtime's results:
    a node a kernel call produced has the runtime's value; another computed
    node (a view, a getitem: no kernel call of its own) is rerun in eager on
    such values; inputs and constants keep their eager values."""

    def __init__(self, eager: Dict[str, Any]):
        self.eager = eager
        self.runtime_results: Dict[str, Any] = {}
        self.derived: Dict[str, Any] = {}

    def recompute(self, node: torch.fx.Node) -> Any:
        args = torch.fx.node.map_arg(node.args, self.value)
        kwargs = torch.fx.node.map_arg(node.kwargs, self.value)
        with torch.no_grad():
            return node.target(*args, **kwargs)

    def value(self, node: torch.fx.Node) -> Any:
        if node.name in self.runtime_results:
            return self.runtime_results[node.name]
        if node.op != "call_function":
            return self.eager[node.name]
        if node.name not in self.derived:
            self.derived[node.name] = self.recompute(node)
        return self.derived[node.name]


def user_frame(stack_trace: Optional[str]) -> Optional[str]:
    """The innermost frame of `stack_trace` outside torch itself (the
    user's line, not torch.nn's), as "file:line in function: code"."""
    if not stack_trace:
        return None
    frames = []
    lines = stack_trace.splitlines()
    for i, line in enumerate(lines):
        line = line.strip()
        if line.startswith('File "'):
            filename, _, rest = line[len('File "') :].partition('", line ')
            lineno, _, function = rest.partition(", in ")
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            frames.append((filename, lineno, function, code))
    if not frames:
        return None
    user = [f for f in frames if not f[0].startswith(_TORCH_DIR)]
    filename, lineno, function, code = (user or frames)[-1]
    return f"{filename}:{lineno} in {function}: {code}"


def _plan(manager: ExecutorchProgramManager, method_name: str):
    for plan in manager.executorch_program.executionPlan:
        if plan.name == method_name:
            return plan
    names = [p.name for p in manager.executorch_program.executionPlan]
    raise ValueError(f"the program has no method '{method_name}' (it has {names})")


def _step_through(method, instructions):
    """Steps `method` to its end, yielding (index, instruction) after each
    instruction has run, following the program's jumps."""
    index = 0
    while True:
        instruction = instructions[index] if index < len(instructions) else None
        taken = True
        if (
            instruction is not None
            and instruction.instrArgsType == InstructionArguments.JumpFalseCall
        ):
            taken = bool(method.get_value(instruction.instrArgs.condValueIndex))
        if not method.step():
            return
        yield index, instruction
        if taken:
            index += 1
        else:
            index = instruction.instrArgs.destinationInstruction


def _compare(
    expected: Any, actual: Any, atol: Optional[float], rtol: Optional[float]
) -> Tuple[bool, str]:
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return False, f"eager gives {len(expected)} results, runtime {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            matches, detail = _compare(e, a, atol, rtol)
            if not matches:
                return False, f"result {i}: {detail}"
        return True, "all results match"
    if isinstance(expected, torch.Tensor):
        return _compare_tensors(expected, actual, atol, rtol)
    if isinstance(expected, torch.SymInt):
        expected = int(expected)
    if expected == actual:
        return True, f"{actual!r} as eager"
    return False, f"eager {expected!r}, runtime {actual!r}"


def _compare_tensors(
    expected: torch.Tensor, actual: Any, atol: Optional[float], rtol: Optional[float]
) -> Tuple[bool, str]:
    if not isinstance(actual, torch.Tensor):
        return False, f"eager gives a tensor, runtime {type(actual).__name__}"
    if actual.dtype != expected.dtype:
        return False, f"dtype: eager {expected.dtype}, runtime {actual.dtype}"
    if actual.shape != expected.shape:
        return (
            False,
            f"shape: eager {list(expected.shape)}, runtime {list(actual.shape)}",
        )
    if expected.is_floating_point() or expected.is_complex():
        default_atol, default_rtol = _TOLERANCES.get(expected.dtype, (1e-4, 1e-4))
        atol = default_atol if atol is None else atol
        rtol = default_rtol if rtol is None else rtol
        close = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        tolerance = f"atol {atol:g}, rtol {rtol:g}"
    else:
        close = actual == expected
        tolerance = "exact"
    mismatched = int((~close).sum())
    if mismatched == 0:
        return True, f"{expected.numel()} elements match ({tolerance})"
    # A NaN on one side only is the largest difference there is.
    diff = (actual.double() - expected.double()).abs().nan_to_num(nan=float("inf"))
    diff[close] = 0
    worst = tuple(int(i) for i in torch.nonzero(diff == diff.max())[0])
    return False, (
        f"max abs diff {float(diff.max()):.6g} at {list(worst)}: "
        f"eager {expected[worst].item()!r}, runtime {actual[worst].item()!r} "
        f"({mismatched} of {expected.numel()} elements differ; {tolerance})"
    )
