"""The user-facing compilation pipeline: `to_edge` and the program managers.

ExportedProgram --to_edge--> EdgeProgramManager --to_executorch-->
ExecutorchProgramManager (.buffer, .save)
"""

import copy
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import torch
from torch._decomp import decomposition_table
from torch._ops import OpOverload
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind
from torch.fx.passes.infra.pass_base import PassResult

from executorch.exir._serialize import serialize_pte_binary
from executorch.exir._serialize._flatbuffer import ProgramT
from executorch.exir.backend.backend_api import to_backend
from executorch.exir.backend.partitioner import Partitioner
from executorch.exir.capture._config import EdgeCompileConfig, ExecutorchBackendConfig
from executorch.exir.kernel_check import check_kernels
from executorch.exir.graph_utils import copy_program, rename_signature
from executorch.exir.emit._pretty import format_plan
from executorch.exir.emit import (
    ConstantData,
    DelegateData,
    InstructionSource,
    emit_constant_method,
    emit_method,
)
from executorch.exir.memory_planning import MemoryReport
from executorch.exir.program import _debug_maps
from executorch.exir.passes.debug_handle_generator_pass import (
    DebugHandleGeneratorPass,
)
from executorch.exir.passes.aten_to_edge import aten_to_edge
from executorch.exir.passes.decompose_nodes_pass import decompose_nodes
from executorch.exir.passes.lower_control_flow_pass import (
    LowerControlFlowPass,
    control_flow_graphs,
)
from executorch.exir.passes.insert_write_back_pass import insert_write_back_for_buffers
from executorch.exir.passes.replace_view_copy_pass import ReplaceViewCopyWithViewPass
from executorch.exir.passes.data_dependent_bounds import bound_data_dependent_sizes
from executorch.exir.passes.fuse_quantized_weights import (
    fuse_quantized_weights,
    unwrap_tensor_subclasses,
)
from executorch.exir.passes.remove_unused_constants import remove_unused_constants
from executorch.exir.passes.spec_prop_pass import SpecPropPass
from executorch.exir.verification.quant_params import check_quantization_parameters
from executorch.exir.verification.verifier import (
    EXIREdgeDialectVerifier,
    EXIRExecutorchVerifier,
    check_edge_ops,
)

Programs = Union[ExportedProgram, Dict[str, ExportedProgram]]


def _as_dict(programs: Programs) -> Dict[str, ExportedProgram]:
    if isinstance(programs, ExportedProgram):
        return {"forward": programs}
    if isinstance(programs, dict) and all(
        isinstance(p, ExportedProgram) for p in programs.values()
    ):
        return dict(programs)
    raise TypeError(
        "expected an ExportedProgram or a dict of method name to ExportedProgram, "
        f"got {type(programs).__name__}"
    )


def _needs_decomposition(op, config: EdgeCompileConfig) -> bool:
    """Whether `op` is an ATen operator outside Core ATen that torch has a
    decomposition for (and the user did not ask to keep)."""
    return (
        isinstance(op, OpOverload)
        and op.namespace == "aten"
        and torch.Tag.core not in op.tags
        and op not in config._preserve_ops
        and op not in config._core_aten_ops_exception_list
        and op in decomposition_table
    )


def _operators(ep: ExportedProgram) -> set:
    return {n.target for n in ep.graph.nodes if n.op == "call_function"}


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    var = torch.ops.aten.var.correction(x, dim, correction=correction, keepdim=keepdim)
    return var, torch.ops.aten.mean.dim(x, dim, keepdim)


def _amax(x):
    return torch.ops.aten.amax.default(x)


def _amin(x):
    return torch.ops.aten.amin.default(x)


def _adaptive_windows(size: int, out: int):
    """Indices [out, k] of each adaptive pooling window along a dimension,
    the shorter windows padded by repeating their last index (a repeat
    changes neither a max nor which index comes first)."""
    i = torch.arange(out)
    start = i * size // out
    end = ((i + 1) * size + out - 1) // out
    k = max(((j + 1) * size + out - 1) // out - j * size // out for j in range(out))
    return torch.minimum(start[:, None] + torch.arange(k), end[:, None] - 1), k


def _adaptive_max_pool2d(x, output_size):
    h, w = x.shape[-2:]
    if not (isinstance(h, int) and isinstance(w, int)):
        return NotImplemented
    rows, kh = _adaptive_windows(h, output_size[0])
    cols, kw = _adaptive_windows(w, output_size[1])
    # [..., oh * kh, ow * kw] -> [..., oh, ow, kh * kw]: each window on the last dim.
    y = x.index_select(-2, rows.flatten()).index_select(-1, cols.flatten())
    y = y.unflatten(-1, (-1, kw)).unflatten(-3, (-1, kh)).transpose(-3, -2)
    values, position = y.flatten(-2).max(-1)
    flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).flatten(-2)
    indices = flat.expand(*position.shape, kh * kw).gather(-1, position[..., None])
    return values, indices[..., 0]


# Non-core operators torch has no decomposition for, or one that yields
# `prims` operators or applies to some shapes only, written in core
# operators instead (var_mean comes from training-mode batch norm).
_CORE_ONLY_DECOMPOSITIONS = {
    torch.ops.aten.var_mean.correction: _var_mean,
    torch.ops.aten.max.default: _amax,
    torch.ops.aten.min.default: _amin,
    torch.ops.aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
}


def _decompose(ep: ExportedProgram, config: EdgeCompileConfig) -> ExportedProgram:
    """Core ATen decomposition: torch.export's default table, plus torch's
    decomposition of each non-core operator the default table leaves in the
    graph (`linalg_vector_norm`), one at a time, kept only if it yields no
    `prims` operators (which no runtime has kernels for) and removes the
    operator (some decompositions apply to a subset of shapes only, like
    `adaptive_max_pool2d` to output sizes that divide the input's)."""
    table = torch.export.default_decompositions()
    for op, decompose in _CORE_ONLY_DECOMPOSITIONS.items():
        if op not in [*config._preserve_ops, *config._core_aten_ops_exception_list]:
            table[op] = decompose
    for op in config._preserve_ops:
        table.pop(op, None)
    core = ep.run_decompositions(table)
    rejected = set()
    while True:
        missing = [
            op
            for op in _operators(core)
            if _needs_decomposition(op, config) and op not in rejected
        ]
        if not missing:
            return core
        op = missing[0]
        table[op] = decomposition_table[op]
        candidate = ep.run_decompositions(table)
        left = _operators(candidate)
        if op in left or any(getattr(t, "namespace", None) == "prims" for t in left):
            del table[op]
            rejected.add(op)
        else:
            core = candidate


def to_edge_transform_and_lower(
    programs: Programs,
    transform_passes: Optional[Sequence[Callable]] = None,
    partitioner: Union[
        Sequence[Partitioner], Dict[str, Sequence[Partitioner]], None
    ] = None,
    constant_methods: Optional[Dict[str, Any]] = None,
    compile_config: Optional[EdgeCompileConfig] = None,
    generate_etrecord: bool = False,
) -> "EdgeProgramManager":
    """`to_edge`, then `transform(transform_passes)`, then `to_backend` with
    each partitioner in turn (a list for every method, or a dict of method
    name to list). Operators that a partitioner lists in
    `ops_to_not_decompose` are kept whole by the Core ATen decomposition so
    that its backend sees them; those it then leaves undelegated are
    decomposed afterwards. `generate_etrecord`: as for `to_edge`."""
    programs = _as_dict(programs)
    if isinstance(partitioner, dict):
        per_method = {name: list(partitioner.get(name, [])) for name in programs}
    else:
        per_method = {name: list(partitioner or []) for name in programs}
    config = copy.copy(compile_config or EdgeCompileConfig())
    kept = [
        op
        for name, ep in programs.items()
        for p in per_method[name]
        for op in p.ops_to_not_decompose(ep)[0]
    ]
    config._preserve_ops = list(config._preserve_ops) + [
        op for op in dict.fromkeys(kept) if op not in config._preserve_ops
    ]
    edge = to_edge(programs, constant_methods, config, generate_etrecord)
    if transform_passes:
        edge = edge.transform(transform_passes)
    for step in range(max(map(len, per_method.values()), default=0)):
        edge = edge.to_backend(
            {name: ps[step] for name, ps in per_method.items() if step < len(ps)}
        )
    # What the partitioners kept whole but did not take is decomposed now,
    # like the rest of the program, for the portable kernels.
    user_config = compile_config or EdgeCompileConfig()
    undelegated = [
        op for op in dict.fromkeys(kept) if op not in user_config._preserve_ops
    ]
    return edge.transform([_decomposition_pass(undelegated)], user_config)


def _decomposition_pass(ops) -> Callable:
    def decompose(gm: torch.fx.GraphModule) -> PassResult:
        return PassResult(gm, decompose_nodes(gm, ops))

    return decompose


def _apply_passes(ep: ExportedProgram, passes: Sequence[Callable]) -> ExportedProgram:
    """A new program: `ep` transformed by `passes` (`ep` stays as it was)."""
    if not passes:
        return ep
    gm, signature = copy_program(ep)
    return ep._update(gm, signature)._transform_do_not_use(*passes)


def _constants_of(ep: ExportedProgram) -> Dict[str, torch.Tensor]:
    """Tensors of the parameter, buffer and lifted-constant inputs, by the
    targets the graph signature names them with."""
    constants = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            source = ep.state_dict if spec.target in ep.state_dict else ep.constants
            constants[spec.target] = source[spec.target]
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            constants[spec.target] = ep.constants[spec.target]
    return constants


def _check_programs(programs, config: EdgeCompileConfig) -> None:
    if config._check_ir_validity:
        exceptions = list(config._core_aten_ops_exception_list) + list(
            config._preserve_ops
        )
        for name, ep in programs.items():
            check_edge_ops(ep.graph_module, exceptions, name)


def _to_edge_program(
    ep: ExportedProgram, config: EdgeCompileConfig, name: str
) -> ExportedProgram:
    # Quantization parameters are checked before the quantize/dequantize
    # calls are fused into kernels or decomposed.
    ep = unwrap_tensor_subclasses(ep)
    check_quantization_parameters(ep, name)
    if config.fuse_quantized_weights:
        ep = fuse_quantized_weights(ep)
    core = _decompose(ep, config)
    gm = core.graph_module
    for graph in control_flow_graphs(gm) + [gm]:
        aten_to_edge(graph, skip_dim_order=config._skip_dim_order)
    edge = core._update(gm, core.graph_signature, verifiers=[EXIREdgeDialectVerifier])
    return remove_unused_constants(edge)


def to_edge(
    programs: Programs,
    constant_methods: Optional[Dict[str, Any]] = None,
    compile_config: Optional[EdgeCompileConfig] = None,
    generate_etrecord: bool = False,
) -> "EdgeProgramManager":
    """Lowers exported programs to the Edge dialect.

    Each program is decomposed to Core ATen (torch.export's default
    decomposition table), its views become copies, memory formats become dim
    orders, and its operators become Edge operators.

    Args:
        programs: an ExportedProgram (the method "forward") or a dict of
            method name to ExportedProgram.
        constant_methods: methods that take no input and return a constant
            (int, float, bool, str, tensor, or lists of them), by name.
        compile_config: options; by default the result is checked to contain
            only Core ATen operators.
        generate_etrecord: start an ETRecord with these ATen programs; the
            managers derived from the result carry it, and `to_executorch`
            completes it (`ExecutorchProgramManager.get_etrecord()`).
    """
    config = compile_config or EdgeCompileConfig()
    edge = {
        name: _to_edge_program(ep, config, name)
        for name, ep in _as_dict(programs).items()
    }
    manager = EdgeProgramManager(edge, constant_methods, config)
    if generate_etrecord:
        # Imported here: the developer tools import this module.
        from executorch.devtools.etrecord import ETRecord

        manager._etrecord = ETRecord()
        manager._etrecord.add_exported_program(_as_dict(programs))
    return manager


class EdgeProgramManager:
    """The methods of a program in the Edge dialect."""

    def __init__(
        self,
        edge_programs: Programs,
        constant_methods: Optional[Dict[str, Any]] = None,
        compile_config: Optional[EdgeCompileConfig] = None,
    ):
        self.compile_config = compile_config or EdgeCompileConfig()
        self._edge_programs = _as_dict(edge_programs)
        self._config_methods = dict(constant_methods or {})
        clash = set(self._edge_programs) & set(self._config_methods)
        if clash:
            raise ValueError(f"methods defined twice: {sorted(clash)}")
        _check_programs(self._edge_programs, self.compile_config)
        for ep in self._edge_programs.values():
            DebugHandleGeneratorPass()(ep.graph_module)
        # The ETRecord `to_edge(generate_etrecord=True)` started.
        self._etrecord = None

    @property
    def methods(self) -> set:
        """Names of the methods backed by graphs."""
        return set(self._edge_programs)

    @property
    def config_methods(self) -> set:
        """Names of the constant methods."""
        return set(self._config_methods)

    def exported_program(self, method_name: str = "forward") -> ExportedProgram:
        """The Edge ExportedProgram of one method."""
        return self._edge_programs[method_name]

    def transform(
        self,
        passes: Union[Sequence[Callable], Dict[str, Sequence[Callable]]],
        compile_config: Optional[EdgeCompileConfig] = None,
    ) -> "EdgeProgramManager":
        """Runs graph passes on every method (a list) or on named methods (a
        dict of method name to list) and returns a new manager; the result
        is verified again.

        A pass is a callable taking a GraphModule and returning a PassResult
        (e.g. a `torch.fx.passes.infra.pass_base.PassBase`) or None when it
        edits the graph in place.
        """
        if isinstance(passes, dict):
            per_method = {name: passes.get(name, []) for name in self._edge_programs}
        else:
            per_method = {name: list(passes) for name in self._edge_programs}
        programs = {
            name: _apply_passes(ep, per_method[name])
            for name, ep in self._edge_programs.items()
        }
        return self._derived(programs, compile_config or self.compile_config)

    def to_backend(
        self, partitioner: Union[Partitioner, Dict[str, Partitioner]]
    ) -> "EdgeProgramManager":
        """Delegates the partitions a partitioner tags (in every method, or
        per method with a dict of method name to partitioner) to their
        backends; returns a new manager."""
        programs = {}
        for name, ep in self._edge_programs.items():
            chosen = (
                partitioner.get(name) if isinstance(partitioner, dict) else partitioner
            )
            programs[name] = to_backend(ep, chosen) if chosen is not None else ep
        return self._derived(programs, self.compile_config)

    def _derived(
        self, programs: Dict[str, ExportedProgram], config: EdgeCompileConfig
    ) -> "EdgeProgramManager":
        """A manager of new programs for the same methods, carrying the
        ETRecord."""
        manager = EdgeProgramManager(programs, self._config_methods, config)
        manager._etrecord = self._etrecord
        return manager

    def to_executorch(
        self, config: Optional[ExecutorchBackendConfig] = None
    ) -> "ExecutorchProgramManager":
        """Converts to out variants, plans memory and emits the program.
        With an ETRecord (`to_edge(generate_etrecord=True)`), the result's
        `get_etrecord()` holds it completed with this final Edge program and
        the emitted program's debug maps."""
        manager = ExecutorchProgramManager(
            self._edge_programs,
            self._config_methods,
            config or ExecutorchBackendConfig(),
        )
        if self._etrecord is not None:
            # A copy: this manager may be lowered again with another config.
            etrecord = copy.copy(self._etrecord)
            etrecord.add_edge_dialect_program(self)
            etrecord.add_executorch_program(manager)
            manager._etrecord = etrecord
        return manager


def _to_planned_program(
    name: str, ep: ExportedProgram, config: ExecutorchBackendConfig
) -> ExportedProgram:
    ep = _apply_passes(ep, config.passes)
    gm, signature = copy_program(ep)
    signature = insert_write_back_for_buffers(gm, signature)
    for graph in control_flow_graphs(gm) + [gm]:
        bound_data_dependent_sizes(graph)
        if config.remove_view_copy:
            ReplaceViewCopyWithViewPass()(graph)
        config.to_out_var_pass(graph)
    if LowerControlFlowPass()(gm).modified:
        # Results of control flow are now the tensors its branches write.
        signature = rename_signature(gm, signature)
    SpecPropPass(signature)(gm)
    config.method_memory_planning_pass(name).run(gm, signature)
    return ep._update(gm, signature, verifiers=[EXIRExecutorchVerifier])


class ExecutorchProgramManager:
    """A program ready to run: out variants, planned memory, emitted and
    serialized on demand to `.pte` bytes."""

    def __init__(
        self,
        edge_programs: Dict[str, ExportedProgram],
        constant_methods: Dict[str, Any],
        config: ExecutorchBackendConfig,
    ):
        self.config = config
        self._programs = {
            name: _to_planned_program(name, ep, config)
            for name, ep in edge_programs.items()
        }
        self._constant_data = ConstantData()
        delegate_data = DelegateData()
        self._sources: Dict[str, List[InstructionSource]] = {}
        self._instruction_nodes: Dict[str, List[torch.fx.Node]] = {}
        plans = []
        for name in sorted(list(self._programs) + list(constant_methods)):
            if name in constant_methods:
                plan = emit_constant_method(
                    name, constant_methods[name], self._constant_data
                )
            else:
                ep = self._programs[name]
                emitted = emit_method(
                    name,
                    ep.graph_module,
                    ep.graph_signature,
                    _constants_of(ep),
                    self._constant_data,
                    delegate_data,
                    ep.call_spec.in_spec,
                    ep.call_spec.out_spec,
                    config.emit_stacktrace,
                )
                plan, self._sources[name] = emitted.plan, emitted.sources
                self._instruction_nodes[name] = emitted.instruction_nodes
            plans.append(plan)
        if config.kernel_library is not None:
            check_kernels(self._sources, config.kernel_library)
        program = ProgramT()
        program.version = 0
        program.executionPlan = plans
        program.constantBuffer = []
        program.backendDelegateData = delegate_data.inline_data()
        program.segments = []
        program.mutableDataSegments = []
        program.namedData = []
        self._program = program
        self._buffer: Optional[bytes] = None
        # Set by EdgeProgramManager.to_executorch when it records one.
        self._etrecord = None
        if config.print_memory_summary:
            print(self.memory_summary())

    @property
    def methods(self) -> set:
        return set(self._programs)

    def get_etrecord(self):
        """The ETRecord of this program (`executorch.devtools.ETRecord`;
        `save(path)` writes it), when `to_edge` or
        `to_edge_transform_and_lower` was given `generate_etrecord=True`."""
        if self._etrecord is None:
            raise RuntimeError(
                "no ETRecord was generated: pass generate_etrecord=True to "
                "to_edge or to_edge_transform_and_lower"
            )
        return self._etrecord

    def exported_program(self, method_name: str = "forward") -> ExportedProgram:
        """The planned out-variant ExportedProgram of one method."""
        return self._programs[method_name]

    def dump_program(self, method_name: Optional[str] = None) -> str:
        """A readable listing of the emitted methods (or one of them): each
        instruction with its operator, argument values (dtype, sizes and
        planned location of tensors) and source line."""
        return "\n".join(
            format_plan(plan, self._sources.get(plan.name))
            for plan in self._program.executionPlan
            if method_name in (None, plan.name)
        )

    def memory_report(self, method_name: str = "forward") -> MemoryReport:
        """How the method's planned memory is used: buffer sizes, the peak
        of live tensors and which tensors make it up."""
        return self._programs[method_name].graph_module.meta["memory_report"]

    def memory_summary(self) -> str:
        """The planned memory each method needs, per buffer, with dynamic
        sizes at their upper bounds (what a runtime must provide to run any
        size within the bounds), and the tensors that make up the peak."""
        lines = []
        for name in sorted(self._programs):
            report = self.memory_report(name)
            sizes = ", ".join(
                f"buffer {i}: {size} bytes"
                for i, size in enumerate(report.buffer_sizes)
                if i > 0
            )
            lines.append(
                f"method '{name}': {sum(report.buffer_sizes)} bytes planned "
                f"({sizes or 'no buffers'})"
            )
            lines += ["  " + line for line in str(report).splitlines()]
        return "\n".join(lines)

    @property
    def executorch_program(self) -> ProgramT:
        """The emitted program (flatbuffer object API); serializing fills in
        its segments."""
        return self._program

    @property
    def constant_data(self) -> List[bytes]:
        """Constant tensor bytes by data_buffer_idx (entry 0 is empty)."""
        return list(self._constant_data.buffers)

    def instruction_sources(
        self, method_name: str = "forward"
    ) -> List[InstructionSource]:
        """For each kernel call of the method, in order: its operator, graph
        node and the Python stack trace that produced it."""
        return list(self._sources.get(method_name, []))

    @property
    def debug_handle_map(self) -> Dict[str, Dict[int, _debug_maps.DebugHandles]]:
        """Per method: instruction index -> debug handle(s) of the Edge
        nodes it runs (see exir/program/_debug_maps.py)."""
        return {
            name: _debug_maps.debug_handle_map(nodes)
            for name, nodes in self._instruction_nodes.items()
        }

    @property
    def delegate_map(self) -> Dict[str, Dict[int, dict]]:
        """Per method: delegate call index -> backend and its event map."""
        return {
            name: _debug_maps.delegate_map(nodes)
            for name, nodes in self._instruction_nodes.items()
        }

    @property
    def instruction_id_to_num_outs_map(self) -> Dict[str, Dict[int, int]]:
        """Per method: delegate call index -> its number of outputs."""
        return {
            name: _debug_maps.num_outs_map(nodes)
            for name, nodes in self._instruction_nodes.items()
        }

    @property
    def buffer(self) -> bytes:
        """The `.pte` file contents."""
        if self._buffer is None:
            # The serializer fills the program's segment tables; keep the
            # emitted object as it was.
            self._buffer = serialize_pte_binary(
                copy.deepcopy(self._program),
                self._constant_data.buffers,
                segment_alignment=self.config.segment_alignment,
                constant_tensor_alignment=self.config.constant_tensor_alignment,
                extract_delegate_segments=self.config.extract_delegate_segments,
            )
        return self._buffer

    def write_to_file(self, open_file) -> None:
        """Writes the `.pte` bytes to a binary file object."""
        open_file.write(self.buffer)

    def save(self, path: str) -> None:
        """Writes the `.pte` file to `path`."""
        with open(path, "wb") as f:
            self.write_to_file(f)
