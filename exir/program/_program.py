"""The user-facing compilation pipeline: `to_edge` and the program managers.

ExportedProgram --to_edge--> EdgeProgramManager --to_executorch-->
ExecutorchProgramManager (.buffer, .save)
"""

import copy
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from executorch.exir._serialize import serialize_pte_binary
from executorch.exir._serialize._flatbuffer import ProgramT
from executorch.exir.backend.backend_api import to_backend
from executorch.exir.backend.partitioner import Partitioner
from executorch.exir.capture._config import EdgeCompileConfig, ExecutorchBackendConfig
from executorch.exir.kernel_check import check_kernels
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
from executorch.exir.pass_manager import ExportedProgramPassManager, PassType
from executorch.exir.passes.debug_handle_generator_pass import (
    DebugHandleGeneratorPass,
)
from executorch.exir.passes.decompose_nodes_pass import DecomposeNodesPass
from executorch.exir.passes.pipelines import edge_passes, executorch_passes
from executorch.exir.verification.verifier import check_edge_ops
from executorch.extension.flat_tensor.serialize.serialize import serialize_ptd

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


def to_edge_transform_and_lower(
    programs: Programs,
    transform_passes: Optional[Sequence[PassType]] = None,
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
    return edge.transform([DecomposeNodesPass(undelegated)], user_config)


def _run_passes(ep: ExportedProgram, passes: Sequence[PassType]) -> ExportedProgram:
    """A new program: `ep` transformed by `passes` (`ep` stays as it was)."""
    return ExportedProgramPassManager(passes)(ep).exported_program


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


def to_edge(
    programs: Programs,
    constant_methods: Optional[Dict[str, Any]] = None,
    compile_config: Optional[EdgeCompileConfig] = None,
    generate_etrecord: bool = False,
    transform_passes: Optional[Sequence[PassType]] = None,
) -> "EdgeProgramManager":
    """Lowers exported programs to the Edge dialect.

    Each program is decomposed to Core ATen (torch.export's default
    decomposition table), its views become copies, memory formats become dim
    orders, and its operators become Edge operators: the passes of
    `exir.passes.pipelines.edge_passes`.

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
        transform_passes: passes run on each method's Edge program last
            (graph passes, see `exir.pass_base`), before the check.
    """
    config = compile_config or EdgeCompileConfig()
    edge = {
        name: _run_passes(ep, edge_passes(config, name, transform_passes or ()))
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
        passes: Union[Sequence[PassType], Dict[str, Sequence[PassType]]],
        compile_config: Optional[EdgeCompileConfig] = None,
    ) -> "EdgeProgramManager":
        """Runs graph passes on every method (a list) or on named methods (a
        dict of method name to list) and returns a new manager; the result
        is verified again.

        A pass is a `exir.pass_base.PassBase` (or a callable taking a
        GraphModule and returning a PassResult, or None when it edits the
        graph in place), run on the graph and each control-flow graph in
        it, or an `ExportedProgramPassBase`.
        """
        if isinstance(passes, dict):
            per_method = {name: passes.get(name, []) for name in self._edge_programs}
        else:
            per_method = {name: list(passes) for name in self._edge_programs}
        programs = {
            name: _run_passes(ep, per_method[name])
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
            name: _run_passes(ep, executorch_passes(config, name))
            for name, ep in edge_programs.items()
        }
        self._constant_data = ConstantData()
        # Initial values of mutable buffers (state), shared by all methods.
        self._mutable_data = ConstantData()
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
                    self._mutable_data,
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
        self._named_data = delegate_data.named_data.get_named_data_store_output()
        program.segments = []
        program.mutableDataSegments = []
        program.namedData = []
        self._program = program
        self._buffer: Optional[bytes] = None
        self._config_methods = set(constant_methods)
        # `.ptd` files by tag, made on first use (see data_files).
        self._tensor_data: Optional[Dict[str, bytes]] = None
        # Set by EdgeProgramManager.to_executorch when it records one.
        self._etrecord = None
        if config.print_memory_summary:
            print(self.memory_summary())

    @property
    def methods(self) -> set:
        """Names of the methods backed by graphs."""
        return set(self._programs)

    @property
    def config_methods(self) -> set:
        """Names of the constant methods."""
        return set(self._config_methods)

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

    def dump_executorch_program(self, verbose: bool = False) -> None:
        """Prints the emitted program: every method's instructions
        (`dump_program()`); with `verbose`, each with the source line that
        produced it."""
        print(
            "\n".join(
                format_plan(plan, self._sources.get(plan.name) if verbose else None)
                for plan in self._program.executionPlan
            )
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

    @property
    def mutable_data(self) -> List[bytes]:
        """Initial values of mutable buffers by the data_buffer_idx of their
        planned tensors (entry 0 is empty)."""
        return list(self._mutable_data.buffers)

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
                named_data=self._named_data,
                mutable_data=self._mutable_data.buffers,
            )
        return self._buffer

    def write_to_file(self, open_file) -> None:
        """Writes the `.pte` bytes to a binary file object."""
        open_file.write(self.buffer)

    @property
    def data_files(self) -> Dict[str, bytes]:
        """The `.ptd` files of this program by tag (file name without
        ".ptd"): constants tagged by `ExecutorchBackendConfig.
        external_constants` and delegate weights tagged external. Empty when
        everything is in the `.pte`."""
        if self._tensor_data is None:
            self._tensor_data = {
                tag: serialize_ptd(self._named_data, tag)
                for tag in sorted(self._named_data.external_data)
            }
        return dict(self._tensor_data)

    def write_tensor_data_to_file(self, outdir) -> None:
        """Writes each `.ptd` file of `data_files` to `outdir/<tag>.ptd`."""
        for tag, data in self.data_files.items():
            name = tag if tag.endswith(".ptd") else f"{tag}.ptd"
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(data)

    def save(self, path: str) -> None:
        """Writes the `.pte` file to `path`."""
        with open(path, "wb") as f:
            self.write_to_file(f)
