"""BackendWithCompilerDemo: the tiny backend of upstream's delegation
tutorials. It takes float32 `sin`, `add.Tensor` (broadcasting, alpha 1)
and `mm` and compiles them into a small instruction list that the runtime
backend of the same name (backends/demo/runtime) interprets.

Blob layout (all integers little-endian):

    "DM01"
    u32 num_values, num_inputs, num_outputs, num_instructions
    per value:       u32 ndim, i64 sizes[ndim], u32 has_data,
                     float32 data[numel] if has_data (a constant)
    inputs:          u32 value index [num_inputs]   (the delegate's inputs)
    outputs:         u32 value index [num_outputs]  (the delegate's outputs)
    per instruction: u32 opcode, u32 output value, u32 num_args,
                     u32 arg value [num_args], i32 debug handle
"""

import struct
from typing import Dict, List, final

import torch
from torch.export import ExportedProgram

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.dialects.edge._ops import to_aten_op

MAGIC = b"DM01"

# Opcodes of the runtime interpreter, by the ATen overload each runs.
OPCODES = {
    torch.ops.aten.sin.default: 0,
    torch.ops.aten.add.Tensor: 1,
    torch.ops.aten.mm.default: 2,
}


def _unsupported(node: torch.fx.Node, why: str) -> RuntimeError:
    where = node.meta.get("stack_trace") or ""
    line = where.strip().splitlines()[-1] if where.strip() else "unknown source"
    return RuntimeError(
        f"{node.op} {node.name} ({node.target}) is not supported in backend "
        f"BackendWithCompilerDemo: {why} (at {line})"
    )


def _float_tensor(node: torch.fx.Node) -> torch.Tensor:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype != torch.float32:
        raise _unsupported(node, "its value is not a float32 tensor")
    if any(not isinstance(s, int) for s in val.shape):
        raise _unsupported(node, "it has a dynamic size")
    return val


class _BlobWriter:
    """Collects values and instructions and packs them into the blob."""

    def __init__(self, ep: ExportedProgram):
        self.ep = ep
        self.values: List[bytes] = []
        self.index: Dict[torch.fx.Node, int] = {}
        self.instructions: List[bytes] = []

    def _constant(self, node: torch.fx.Node):
        signature = self.ep.graph_signature
        target = (
            signature.inputs_to_parameters.get(node.name)
            or signature.inputs_to_buffers.get(node.name)
            or signature.inputs_to_lifted_tensor_constants.get(node.name)
        )
        if target is not None:
            in_state = target in self.ep.state_dict
            source = self.ep.state_dict if in_state else self.ep.constants
            return source[target]
        if node.op == "get_attr":
            return getattr(self.ep.graph_module, node.target)
        return None

    def value(self, node: torch.fx.Node) -> int:
        if node in self.index:
            return self.index[node]
        val = _float_tensor(node)
        data = self._constant(node)
        packed = struct.pack(f"<I{val.dim()}q", val.dim(), *val.shape)
        if data is None:
            packed += struct.pack("<I", 0)
        else:
            array = data.detach().to(torch.float32).contiguous().numpy()
            packed += struct.pack("<I", 1) + array.tobytes()
        self.index[node] = len(self.values)
        self.values.append(packed)
        return self.index[node]

    def instruction(self, node: torch.fx.Node) -> None:
        op = to_aten_op(node.target)
        if op not in OPCODES:
            raise _unsupported(node, "the demo backend runs sin, add.Tensor and mm")
        if op == torch.ops.aten.add.Tensor and node.kwargs.get("alpha", 1) != 1:
            raise _unsupported(node, "add with alpha other than 1")
        args = [a for a in node.args if isinstance(a, torch.fx.Node)]
        if len(args) != len(node.args):
            raise _unsupported(node, "an argument is not a tensor")
        arg_indices = [self.value(a) for a in args]
        out = self.value(node)
        handle = node.meta.get("debug_handle", -1)
        self.instructions.append(
            struct.pack(
                f"<III{len(arg_indices)}Ii",
                OPCODES[op],
                out,
                len(arg_indices),
                *arg_indices,
                handle,
            )
        )

    def pack(self, inputs: List[int], outputs: List[int]) -> bytes:
        header = MAGIC + struct.pack(
            "<IIII", len(self.values), len(inputs), len(outputs), len(self.instructions)
        )
        return (
            header
            + b"".join(self.values)
            + struct.pack(f"<{len(inputs)}I", *inputs)
            + struct.pack(f"<{len(outputs)}I", *outputs)
            + b"".join(self.instructions)
        )


@final
class BackendWithCompilerDemo(BackendDetails):
    """Compiles a float32 program of sin, add and mm for the demo runtime
    backend; anything else raises RuntimeError naming the node."""

    @staticmethod
    def preprocess(
        edge_program: ExportedProgram,
        compile_specs: List[CompileSpec],
    ) -> PreprocessResult:
        writer = _BlobWriter(edge_program)
        user_inputs = set(edge_program.graph_signature.user_inputs)
        inputs = []
        debug_handle_map = {}
        for node in edge_program.graph.nodes:
            if node.op == "placeholder":
                if node.name in user_inputs:
                    inputs.append(writer.value(node))
            elif node.op == "call_function":
                writer.instruction(node)
                handle = node.meta.get("debug_handle")
                if handle is not None:
                    debug_handle_map[handle] = (handle,)
            elif node.op not in ("output", "get_attr"):
                raise _unsupported(node, f"'{node.op}' nodes")
        outputs = [
            writer.value(n) for n in edge_program.graph.output_node().args[0]
        ]
        return PreprocessResult(
            processed_bytes=writer.pack(inputs, outputs),
            debug_handle_map=debug_handle_map,
        )
