"""The emitter: from planned Edge graphs to the program's flatbuffer objects.

Each method becomes an ExecutionPlan: a list of values (tensors, scalars,
lists), one chain of instructions (KernelCall and DelegateCall; JumpFalseCall
and MoveCall for lowered control flow), the operator table and the planned
buffer sizes. Constant tensor data of all methods goes into one list
of byte strings (`ConstantData`), which the serializer lays out as the
constant segment; a Tensor value refers to it by `data_buffer_idx`.

The emitter reads only the graph (its nodes, TensorSpecs and operator
schemas) and the graph signature; it does not run torch.
"""

import contextlib
import dataclasses
import hashlib
import operator
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch.export.graph_signature import ExportGraphSignature, InputKind
from torch.utils import _pytree as pytree

from executorch.exir import control_flow, memory
from executorch.extension.progress import ProgressBar
from executorch.exir._serialize._flatbuffer import (
    AllocationDetailsT,
    BackendDelegateDataReferenceT,
    BackendDelegateInlineDataT,
    BackendDelegateT,
    BoolListT,
    BoolT,
    ChainT,
    CompileSpecT,
    ContainerMetadataT,
    DataLocation,
    DelegateCallT,
    DoubleListT,
    DoubleT,
    EValueT,
    ExecutionPlanT,
    ExtraTensorInfoT,
    FrameListT,
    FrameT,
    InstructionArguments,
    InstructionT,
    IntListT,
    IntT,
    JumpFalseCallT,
    KernelCallT,
    KernelTypes,
    MoveCallT,
    NullT,
    OperatorT,
    OptionalTensorListT,
    StringT,
    TensorDataLocation,
    TensorListT,
    TensorShapeDynamism,
    TensorT,
)
from executorch.exir._serialize._named_data_store import NamedDataStore
from executorch.exir.dialects.edge._ops import to_aten_op
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.graph_utils import SYM_OPS
from executorch.exir.memory_planning import flatten_specs
from executorch.exir.lowered_backend_module import (
    LoweredBackendModule,
    executorch_call_delegate,
)
from executorch.exir.operator_schema import bind_arguments, out_arguments
from executorch.exir.tensor import TensorSpec, memory_format_code, scalar_type_code
from executorch.exir.tensor_layout import TensorLayout

# Python arithmetic on symbolic sizes, run by the runtime's prim ops.
_PRIM_OPS = {
    operator.add: "add",
    operator.sub: "sub",
    operator.mul: "mul",
    operator.floordiv: "floordiv",
    operator.truediv: "truediv",
    operator.mod: "mod",
    operator.eq: "eq",
    operator.gt: "gt",
    operator.lt: "lt",
    operator.ge: "ge",
    operator.le: "le",
    torch.sym_ite: "sym_ite",
}

_LAYOUT_CODES = {torch.strided: 0}

_CONTROL_FLOW = (
    control_flow.label,
    control_flow.jump_false,
    control_flow.jump,
    control_flow.int_variable,
    control_flow.increment,
    control_flow.copy_index,
)


class EmitError(ExportError, RuntimeError):
    """The graph has something the program format cannot express."""

    error_type = ExportErrorType.NOT_SUPPORTED


def _tensor_bytes(
    tensor: torch.Tensor, dim_order: Optional[Sequence[int]] = None
) -> bytes:
    """The bytes of `tensor` laid out in `dim_order` (what its Tensor table
    entry declares; None: the default order): a channels-last parameter's
    bytes are NHWC."""
    order = list(range(tensor.dim())) if dim_order is None else list(dim_order)
    flat = tensor.detach().cpu().permute(order).contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


class ConstantData:
    """Constant tensor bytes shared by all methods of a program; entry 0 is
    the reserved empty entry. Identical bytes are stored once."""

    def __init__(self):
        self.buffers: List[bytes] = [b""]
        self._index: Dict[bytes, int] = {}
        self._progress: Optional[ProgressBar] = None

    @contextlib.contextmanager
    def progress(self, description: str, total_bytes: int):
        """Within the block, a progress bar (shown for big weights) counts
        the bytes of the constants added."""
        with ProgressBar(total_bytes, description, unit="B") as bar:
            self._progress = bar
            try:
                yield
            finally:
                self._progress = None

    def add(
        self, tensor: torch.Tensor, dim_order: Optional[Sequence[int]] = None
    ) -> int:
        """Stores the tensor's bytes in `dim_order` (None: the default
        order); returns its data_buffer_idx."""
        data = _tensor_bytes(tensor, dim_order)
        if self._progress is not None:
            self._progress.step(len(data))
        key = hashlib.sha256(data).digest() + str(len(data)).encode()
        if key not in self._index:
            self._index[key] = len(self.buffers)
            self.buffers.append(data)
        return self._index[key]


class DelegateData:
    """Delegate blobs shared by all methods of a program, stored inline in
    the program (`backend_delegate_data`); the serializer may move them to
    segments. Identical blobs are stored once. `named_data` gathers the data
    looked up by key at run time: what delegates store, and the constants
    tagged for `.ptd` files (by fully qualified name)."""

    def __init__(self):
        self.blobs: List[bytes] = []
        self._index: Dict[bytes, int] = {}
        self.named_data = NamedDataStore()

    def add(self, blob: bytes) -> int:
        """Stores `blob`; returns its index in backend_delegate_data."""
        if blob not in self._index:
            self._index[blob] = len(self.blobs)
            self.blobs.append(blob)
        return self._index[blob]

    def inline_data(self) -> List[BackendDelegateInlineDataT]:
        entries = []
        for blob in self.blobs:
            entry = BackendDelegateInlineDataT()
            # A uint8 array, not a list of ints: blobs hold the weights
            # (tens of MB), which the flatbuffer writes in one copy and
            # deepcopy copies as one buffer.
            entry.data = np.frombuffer(blob, dtype=np.uint8)
            entries.append(entry)
        return entries


@dataclasses.dataclass
class InstructionSource:
    """Where an emitted instruction came from, for error messages."""

    operator: str
    node: str
    stack_trace: Optional[str]


def _evalue(kind: int, val) -> EValueT:
    value = EValueT()
    value.valType = kind
    value.val = val
    return value


def _table(cls, field: str, python_value):
    """A flatbuffer object-API table of type `cls` with one field set."""
    obj = cls()
    setattr(obj, field, python_value)
    return obj


def _concrete(value):
    """A symbolic scalar input's example value (the caller sets the real
    one); other values unchanged."""
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return value.node.hint
    return value


def _frames(stack_trace: Optional[str]) -> FrameListT:
    frames = FrameListT()
    frames.items = []
    lines = (stack_trace or "").splitlines()
    for i, line in enumerate(lines):
        match = re.match(r'\s*File "(.*)", line (\d+), in (.*)', line)
        if match:
            frame = FrameT()
            frame.filename, frame.name = match.group(1), match.group(3)
            frame.lineno = int(match.group(2))
            frame.context = lines[i + 1].strip() if i + 1 < len(lines) else ""
            frames.items.append(frame)
    return frames


class _MethodEmitter:
    def __init__(
        self,
        name: str,
        graph_module: torch.fx.GraphModule,
        graph_signature: ExportGraphSignature,
        constants: Dict[str, torch.Tensor],
        constant_data: ConstantData,
        delegate_data: DelegateData,
        emit_stacktrace: bool,
        mutable_data: Optional[ConstantData] = None,
    ):
        self.name = name
        self.mutable_data = mutable_data
        self.delegate_data = delegate_data
        self.delegates: List[BackendDelegateT] = []
        self.graph_module = graph_module
        self.signature = graph_signature
        self.constants = constants
        self.constant_data = constant_data
        self.emit_stacktrace = emit_stacktrace
        self.values: List[EValueT] = []
        self.node_values: Dict[torch.fx.Node, Any] = {}
        self.spec_values: Dict[int, int] = {}
        self.operators: List[OperatorT] = []
        self.operator_index: Dict[Tuple[str, str], int] = {}
        self.instructions: List[InstructionT] = []
        # The stack trace of each instruction, and the source of each kernel
        # call.
        self.traces: List[Optional[str]] = []
        self.sources: List[InstructionSource] = []
        # The graph node of each instruction, for the developer tools' maps.
        self.instruction_nodes: List[torch.fx.Node] = []
        self.inputs: List[int] = []
        self.outputs: List[int] = []
        # Control flow: the instruction index of each label, and the jumps
        # whose destination is filled in once every label is known.
        self.labels: Dict[str, int] = {}
        self.jumps: List[Tuple[JumpFalseCallT, str, torch.fx.Node]] = []

    # Values.

    def _add(self, kind: int, val) -> int:
        self.values.append(_evalue(kind, val))
        return len(self.values) - 1

    def _null(self) -> int:
        return self._add(KernelTypes.Null, NullT())

    def _int(self, v: int) -> int:
        return self._add(KernelTypes.Int, _table(IntT, "intVal", int(v)))

    def _double(self, v: float) -> int:
        return self._add(KernelTypes.Double, _table(DoubleT, "doubleVal", float(v)))

    def _bool(self, v: bool) -> int:
        return self._add(KernelTypes.Bool, _table(BoolT, "boolVal", bool(v)))

    def _string(self, v: str) -> int:
        return self._add(KernelTypes.String, _table(StringT, "stringVal", v))

    def _list(self, kind: int, cls, items) -> int:
        return self._add(kind, _table(cls, "items", list(items)))

    def tensor(self, spec: TensorSpec, constant: Optional[torch.Tensor] = None) -> int:
        """The Tensor value of `spec`, emitted once per spec object."""
        if id(spec) in self.spec_values:
            return self.spec_values[id(spec)]
        t = TensorT()
        t.scalarType = scalar_type_code(spec.dtype)
        t.sizes = list(spec.shape)
        t.dimOrder = list(spec.dim_order)
        t.requiresGrad = spec.requires_grad
        t.shapeDynamism = (
            TensorShapeDynamism.DYNAMIC_BOUND
            if spec.is_dynamic
            else TensorShapeDynamism.STATIC
        )
        if spec.planned:
            t.allocationInfo = AllocationDetailsT()
            t.allocationInfo.memoryId = spec.mem_id
            t.allocationInfo.memoryOffsetLow = spec.mem_offset & 0xFFFFFFFF
            t.allocationInfo.memoryOffsetHigh = spec.mem_offset >> 32
            if constant is not None:
                # A planned tensor with data: a mutable buffer's initial
                # state, in the mutable data segment (upstream's layout).
                t.dataBufferIdx = self.mutable_data.add(constant, t.dimOrder)
        elif constant is not None:
            t.dataBufferIdx = self.constant_data.add(constant, t.dimOrder)
        index = self._add(KernelTypes.Tensor, t)
        self.spec_values[id(spec)] = index
        return index

    def _external_tensor(
        self, spec: TensorSpec, constant: torch.Tensor, fqn: str, tag: str
    ) -> int:
        """A constant tensor whose bytes go to the `.ptd` file `tag`, found at
        run time by its fully qualified name `fqn`."""
        index = self.tensor(spec)
        t = self.values[index].val
        t.extraTensorInfo = ExtraTensorInfoT()
        t.extraTensorInfo.fullyQualifiedName = fqn
        t.extraTensorInfo.location = TensorDataLocation.EXTERNAL
        layout = TensorLayout(t.scalarType, list(t.sizes), list(t.dimOrder))
        self.delegate_data.named_data.add_named_data(
            fqn, _tensor_bytes(constant, t.dimOrder), 16, tag, layout
        )
        return index

    def python_value(self, value) -> int:
        """A value for a Python scalar, string, dtype or memory format."""
        if value is None:
            return self._null()
        if isinstance(value, bool):
            return self._bool(value)
        if isinstance(value, int):
            return self._int(value)
        if isinstance(value, float):
            return self._double(value)
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, torch.dtype):
            return self._int(scalar_type_code(value))
        if isinstance(value, torch.memory_format):
            return self._int(memory_format_code(value))
        if isinstance(value, torch.layout) and value in _LAYOUT_CODES:
            return self._int(_LAYOUT_CODES[value])
        raise EmitError(f"cannot emit {value!r} of type {type(value).__name__}")

    def _list_value(self, elem_type, items, node) -> int:
        kind = str(elem_type)
        if kind == "Tensor":
            return self._list(
                KernelTypes.TensorList,
                TensorListT,
                [self.node_values[i] for i in items],
            )
        if kind == "Optional[Tensor]":
            return self._list(
                KernelTypes.OptionalTensorList,
                OptionalTensorListT,
                [self._null() if i is None else self.node_values[i] for i in items],
            )
        if kind in ("int", "SymInt"):
            # Each element is its own Int value: a symbolic size computed at
            # run time updates the list through it.
            return self._list(
                KernelTypes.IntList,
                IntListT,
                [
                    (
                        self.node_values[i]
                        if isinstance(i, torch.fx.Node)
                        else self._int(i)
                    )
                    for i in items
                ],
            )
        if kind == "float":
            return self._list(KernelTypes.DoubleList, DoubleListT, map(float, items))
        if kind == "bool":
            return self._list(KernelTypes.BoolList, BoolListT, map(bool, items))
        raise EmitError(f"node '{node.name}': cannot emit a list of {kind}")

    def argument(self, arg: torch._C.Argument, value, node: torch.fx.Node) -> int:
        """The value index for `value` passed as schema argument `arg`."""
        arg_type = arg.type
        if isinstance(arg_type, torch.OptionalType):
            if value is None:
                return self._null()
            arg_type = arg_type.getElementType()
        if isinstance(value, torch.fx.Node):
            emitted = self.node_values[value]
            if isinstance(emitted, list):
                # A Tensor[] out argument: the list of its allocated tensors.
                return self._list(KernelTypes.TensorList, TensorListT, emitted)
            return emitted
        if isinstance(arg_type, torch.ListType):
            return self._list_value(arg_type.getElementType(), value, node)
        if isinstance(arg_type, torch.TensorType):
            raise EmitError(
                f"node '{node.name}': argument '{arg.name}' is a Tensor but got "
                f"{value!r}"
            )
        if isinstance(arg_type, torch.FloatType) and not isinstance(value, bool):
            return self._double(value)
        return self.python_value(value)

    # Instructions.

    def _operator(self, name: str, overload: str) -> int:
        key = (name, overload)
        if key not in self.operator_index:
            op = OperatorT()
            op.name, op.overload = name, overload
            self.operator_index[key] = len(self.operators)
            self.operators.append(op)
        return self.operator_index[key]

    def _instruction(self, kind: int, args, node: torch.fx.Node) -> None:
        instruction = InstructionT()
        instruction.instrArgsType = kind
        instruction.instrArgs = args
        self.instructions.append(instruction)
        self.traces.append(node.meta.get("stack_trace"))
        self.instruction_nodes.append(node)

    def _kernel_call(self, name: str, overload: str, args: List[int], node) -> None:
        call = KernelCallT()
        call.opIndex = self._operator(name, overload)
        call.args = args
        self._instruction(InstructionArguments.KernelCall, call, node)
        qualified = f"{name}.{overload}" if overload else name
        self.sources.append(
            InstructionSource(qualified, node.name, node.meta.get("stack_trace"))
        )

    def _emit_operator(self, node: torch.fx.Node) -> None:
        op = to_aten_op(node.target)
        schema = op._schema
        outs = out_arguments(schema)
        bound = bind_arguments(schema, node.args, node.kwargs)
        if not outs:
            # An in-place operator (the write-back `copy_` of a buffer)
            # returns the tensor it writes.
            written = [
                a for a in schema.arguments if a.alias_info and a.alias_info.is_write
            ]
            if not written:
                raise EmitError(
                    f"node '{node.name}': {op.name()} is not an out variant; run "
                    "ToOutVarPass before emitting"
                )
            outs = written[:1]
        args = [self.argument(a, bound.get(a.name), node) for a in schema.arguments]
        out_values = [self.node_values[bound[a.name]] for a in outs]
        if len(schema.returns) == 1:
            args.append(out_values[0])
            self.node_values[node] = out_values[0]
        elif schema.returns:
            args.append(self._list(KernelTypes.TensorList, TensorListT, out_values))
            self.node_values[node] = out_values
        else:
            # `-> ()` with a Tensor[] out: the list is passed again as the
            # return slot, which the runtime's calling convention expects.
            args.append(self._list(KernelTypes.TensorList, TensorListT, out_values[0]))
            self.node_values[node] = out_values[0]
        self._kernel_call(schema.name, schema.overload_name, args, node)

    def _emit_sym(self, node: torch.fx.Node, name: str, overload: str) -> None:
        args = [
            (
                self.node_values[a]
                if isinstance(a, torch.fx.Node)
                else self.python_value(a)
            )
            for a in node.args
        ]
        hint = node.meta.get("val")
        result = self._int(hint if isinstance(hint, int) else 0)
        self.node_values[node] = result
        self._kernel_call(name, overload, args + [result], node)

    def _emit_control_flow(self, node: torch.fx.Node) -> None:
        """The nodes of `exir.control_flow` that LowerControlFlowPass put in
        the graph."""
        target = node.target
        if target is control_flow.label:
            self.labels[node.args[0]] = len(self.instructions)
        elif target in (control_flow.jump_false, control_flow.jump):
            call = JumpFalseCallT()
            if target is control_flow.jump:
                # Unconditional: jump when a constant false is false.
                call.condValueIndex = self._bool(False)
            else:
                condition = node.args[0]
                call.condValueIndex = (
                    self.node_values[condition]
                    if isinstance(condition, torch.fx.Node)
                    else self._bool(condition)
                )
            self.jumps.append((call, node.args[-1], node))
            self._instruction(InstructionArguments.JumpFalseCall, call, node)
        elif target is control_flow.int_variable:
            # Reset on every run by a move from a constant.
            call = MoveCallT()
            call.moveFrom = self._int(node.args[0])
            call.moveTo = self.node_values[node] = self._int(node.args[0])
            self._instruction(InstructionArguments.MoveCall, call, node)
        elif target is control_flow.increment:
            counter = self.node_values[node.args[0]]
            args = [counter, self._int(1), counter]
            self._kernel_call("executorch_prim::add", "Scalar", args, node)
        else:
            args = [self.node_values[a] for a in node.args]
            self._kernel_call("executorch_prim::et_copy_index", "tensor", args, node)

    def _resolve_jumps(self) -> None:
        for call, label, node in self.jumps:
            if label not in self.labels:
                raise EmitError(f"node '{node.name}' jumps to unknown label {label}")
            call.destinationInstruction = self.labels[label]

    def _emit_delegate(self, node: torch.fx.Node) -> None:
        """A LoweredBackendModule (get_attr) becomes an entry of the plan's
        delegate table, its blob inline program data."""
        module = getattr(self.graph_module, node.target)
        if not isinstance(module, LoweredBackendModule):
            raise EmitError(f"cannot emit attribute '{node.target}' ({type(module)})")
        delegate = BackendDelegateT()
        delegate.id = module.backend_id
        delegate.processed = BackendDelegateDataReferenceT()
        delegate.processed.location = DataLocation.INLINE
        delegate.processed.index = self.delegate_data.add(module.processed_bytes)
        if module.named_data_store_output is not None:
            self.delegate_data.named_data.merge_named_data_store(
                module.named_data_store_output
            )
        delegate.compileSpecs = []
        for spec in module.compile_specs:
            compile_spec = CompileSpecT()
            compile_spec.key, compile_spec.value = spec.key, list(spec.value)
            delegate.compileSpecs.append(compile_spec)
        self.node_values[node] = len(self.delegates)
        self.delegates.append(delegate)

    def _emit_delegate_call(self, node: torch.fx.Node) -> None:
        """DelegateCall args: the delegate's inputs, then its outputs."""
        module, *inputs = node.args
        spec = node.meta["spec"]
        outputs = [self.tensor(s) for s in flatten_specs(spec)]
        call = DelegateCallT()
        call.delegateIndex = self.node_values[module]
        call.args = [self.node_values[i] for i in inputs] + outputs
        self._instruction(InstructionArguments.DelegateCall, call, node)
        # A delegate of a whole one-output program yields the tensor itself.
        self.node_values[node] = (
            outputs if isinstance(spec, (list, tuple)) else outputs[0]
        )

    def _emit_call(self, node: torch.fx.Node) -> None:
        target = node.target
        if target is executorch_call_delegate:
            self._emit_delegate_call(node)
        elif target is memory.view:
            # No instruction: the value is the base's memory, reshaped.
            self.node_values[node] = self.tensor(node.meta["spec"])
        elif target is memory.alloc:
            spec = node.meta["spec"]
            self.node_values[node] = (
                [self.tensor(s) for s in spec]
                if isinstance(spec, list)
                else self.tensor(spec)
            )
        elif target in _CONTROL_FLOW:
            self._emit_control_flow(node)
        elif target is operator.getitem:
            source, index = node.args
            self.node_values[node] = self.node_values[source][index]
        elif target in SYM_OPS:
            schema = target._schema
            self._emit_sym(node, schema.name, schema.overload_name)
        elif target in _PRIM_OPS:
            self._emit_sym(node, f"executorch_prim::{_PRIM_OPS[target]}", "Scalar")
        else:
            self._emit_operator(node)

    def _emit_placeholder(self, node: torch.fx.Node, input_spec) -> None:
        spec = node.meta.get("spec")
        if input_spec.kind == InputKind.USER_INPUT:
            if isinstance(spec, TensorSpec):
                index = self.tensor(spec)
            else:
                index = self.python_value(_concrete(node.meta.get("val")))
            self.inputs.append(index)
        elif isinstance(spec, TensorSpec) and spec.mutable:
            # State: planned memory that the runtime fills with the buffer's
            # eager value when the method loads (and on reset).
            initial = self.constants.get(input_spec.target)
            if initial is None:
                raise EmitError(
                    f"no initial value for mutable buffer '{input_spec.target}'"
                )
            index = self.tensor(spec, initial)
        elif spec is not None and spec.const:
            constant = self.constants.get(input_spec.target)
            if constant is None:
                raise EmitError(f"no data for constant '{input_spec.target}'")
            tag = node.meta.get("constant_tag")
            if tag is None:
                index = self.tensor(spec, constant)
            else:
                index = self._external_tensor(spec, constant, input_spec.target, tag)
        else:
            raise EmitError(
                f"input '{node.name}' ({input_spec.kind.name}) is not supported yet"
            )
        self.node_values[node] = index

    def emit(self) -> ExecutionPlanT:
        for kind in (s.kind.name for s in self.signature.output_specs):
            if kind != "USER_OUTPUT":
                raise EmitError(
                    f"method '{self.name}': {kind} outputs (mutated buffers or "
                    "inputs) are not supported yet"
                )
        input_specs = iter(self.signature.input_specs)
        for node in self.graph_module.graph.nodes:
            if node.op == "placeholder":
                self._emit_placeholder(node, next(input_specs))
            elif node.op == "call_function":
                self._emit_call(node)
            elif node.op == "get_attr":
                self._emit_delegate(node)
            elif node.op == "output":
                for out in pytree.tree_leaves(node.args[0]):
                    self.outputs.append(
                        self.node_values[out]
                        if isinstance(out, torch.fx.Node)
                        else self.python_value(out)
                    )
            else:
                raise EmitError(f"cannot emit node '{node.name}' ({node.op})")

        self._resolve_jumps()
        chain = ChainT()
        chain.inputs, chain.outputs = [], []
        chain.instructions = self.instructions
        if self.emit_stacktrace:
            chain.stacktrace = [_frames(trace) for trace in self.traces]
        plan = _plan(self.name, self.values, self.inputs, self.outputs, [chain])
        plan.operators = self.operators
        plan.delegates = self.delegates
        plan.nonConstBufferSizes = list(
            self.graph_module.meta.get("non_const_buffer_sizes", [0])
        )
        return plan


def _plan(name, values, inputs, outputs, chains) -> ExecutionPlanT:
    plan = ExecutionPlanT()
    plan.name = name
    plan.values = values
    plan.inputs = inputs
    plan.outputs = outputs
    plan.chains = chains
    plan.operators = []
    plan.delegates = []
    plan.nonConstBufferSizes = [0]
    return plan


def _plain_containers(tree):
    """`tree` with named tuples (torch.return_types.max, ...) as tuples."""
    if isinstance(tree, list):
        return [_plain_containers(t) for t in tree]
    if isinstance(tree, tuple):
        return tuple(_plain_containers(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _plain_containers(v) for k, v in tree.items()}
    return tree


def _dumps(spec) -> str:
    if spec is None:
        return ""
    try:
        return pytree.treespec_dumps(spec)
    except NotImplementedError:
        # Types without a registered serialized name (the named tuples that
        # topk or max return) are described as the plain tuples they are.
        tree = pytree.tree_unflatten([0] * spec.num_leaves, spec)
        return pytree.treespec_dumps(pytree.tree_structure(_plain_containers(tree)))


def _container_metadata(in_spec, out_spec) -> ContainerMetadataT:
    meta = ContainerMetadataT()
    meta.encodedInpStr = _dumps(in_spec)
    meta.encodedOutStr = _dumps(out_spec)
    return meta


@dataclasses.dataclass
class EmittedMethod:
    """An emitted method: its plan, the source of each kernel call and the
    graph node of each instruction."""

    plan: ExecutionPlanT
    sources: List[InstructionSource]
    instruction_nodes: List[torch.fx.Node]


def emit_method(
    name: str,
    graph_module: torch.fx.GraphModule,
    graph_signature: ExportGraphSignature,
    constants: Dict[str, torch.Tensor],
    constant_data: ConstantData,
    delegate_data: DelegateData,
    in_spec=None,
    out_spec=None,
    emit_stacktrace: bool = False,
    mutable_data: Optional[ConstantData] = None,
) -> EmittedMethod:
    """Emits one planned out-variant graph as an ExecutionPlan.

    `constants` maps the targets of parameter, buffer and lifted-constant
    inputs to their tensors; their bytes are added to `constant_data`, the
    initial values of the buffers the method mutates to `mutable_data`, and
    the blobs of delegates to `delegate_data`.
    """
    if mutable_data is None:
        mutable_data = ConstantData()
    emitter = _MethodEmitter(
        name,
        graph_module,
        graph_signature,
        constants,
        constant_data,
        delegate_data,
        emit_stacktrace,
        mutable_data,
    )
    total_bytes = sum(
        t.nbytes for t in constants.values() if isinstance(t, torch.Tensor)
    )
    with constant_data.progress(f"constants of {name}", total_bytes):
        plan = emitter.emit()
    plan.containerMetaType = _container_metadata(in_spec, out_spec)
    return EmittedMethod(plan, emitter.sources, emitter.instruction_nodes)


def emit_constant_method(
    name: str, value, constant_data: ConstantData
) -> ExecutionPlanT:
    """A method without instructions that returns `value` (a scalar, string,
    tensor, or a nested list/tuple of them)."""
    emitter = _MethodEmitter(name, None, None, {}, constant_data, None, False)
    leaves, spec = pytree.tree_flatten(value)
    outputs = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            outputs.append(
                emitter.tensor(TensorSpec.from_tensor(leaf, const=True), leaf)
            )
        else:
            outputs.append(emitter.python_value(leaf))
    chain = ChainT()
    chain.inputs, chain.outputs, chain.instructions = [], [], []
    plan = _plan(name, emitter.values, [], outputs, [chain])
    plan.containerMetaType = _container_metadata(None, spec)
    return plan
