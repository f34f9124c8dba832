"""Export-time check of quantization parameters.

Every `quantized_decomposed` quantize / dequantize / embedding call and
every torchao `quantize_affine` / `dequantize_affine` call whose
parameters are known when the program is exported (numbers in the call,
or constant tensors: weights, lifted constants) is checked here, so that a
program the runtime would refuse (or compute garbage with) fails at
`to_edge` naming the node and the Python line that produced it:

- scales must be finite and > 0;
- integer zero points must lie within [quant_min, quant_max];
- [quant_min, quant_max] must lie within the quantized dtype's range;
- a group size must be > 1 and divide the last dim (per-group layouts),
  and an embedding table's groups must divide its row.

Parameters computed at run time (dynamic quantization) are checked by the
kernels when they run.
"""

from typing import Callable, Dict, List, Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from executorch.exir.dialects.edge._ops import EdgeOpOverload
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
from executorch.exir.source_info import source_line


class QuantizationParameterError(ExportError, ValueError):
    """A quantize/dequantize call has invalid quantization parameters."""

    error_type = ExportErrorType.VIOLATION_OF_SPEC


_DTYPE_RANGE = {
    torch.uint8: (0, 255),
    torch.int8: (-128, 127),
    torch.int16: (-32768, 32767),
    torch.uint16: (0, 65535),
    torch.int32: (-(2**31), 2**31 - 1),
}

# Argument positions of each checked operator (after the first, quantized
# or float, input): scale, zero point, quant_min, quant_max, dtype, and
# the group size where there is one.
_LAYOUTS: Dict[str, Dict[str, int]] = {
    "quantize_per_tensor": dict(scale=1, zp=2, qmin=3, qmax=4, dtype=5),
    "dequantize_per_tensor": dict(scale=1, zp=2, qmin=3, qmax=4, dtype=5),
    "quantize_per_channel": dict(scale=1, zp=2, qmin=4, qmax=5, dtype=6),
    "dequantize_per_channel": dict(scale=1, zp=2, qmin=4, qmax=5, dtype=6),
    "quantize_per_token": dict(scale=1, zp=2, qmin=3, qmax=4, dtype=5),
    "dequantize_per_token": dict(scale=1, zp=2, qmin=3, qmax=4, dtype=5),
    "quantize_per_channel_group": dict(scale=1, zp=2, qmin=3, qmax=4, dtype=5, group=6),
    "dequantize_per_channel_group": dict(
        scale=1, zp=2, qmin=3, qmax=4, dtype=5, group=6
    ),
    "embedding_byte": dict(scale=1, zp=2, qmin=3, qmax=4),
    "embedding_2bit": dict(scale=1, zp=2, qmin=3, qmax=4),
    "embedding_4bit": dict(scale=1, zp=2, qmin=3, qmax=4),
    # torchao: (input, block_size, scale, zero_point, dtype, qmin, qmax)
    "quantize_affine": dict(scale=2, zp=3, dtype=4, qmin=5, qmax=6),
    "dequantize_affine": dict(scale=2, zp=3, dtype=4, qmin=5, qmax=6),
}
_NAMESPACES = {"quantized_decomposed", "torchao"}


def _constant_of(ep: ExportedProgram) -> Callable[[object], Optional[torch.Tensor]]:
    """A function from an argument to its value when it is known at export
    (a number, or a parameter / buffer / lifted constant placeholder)."""
    tensors = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            source = ep.state_dict if spec.target in ep.state_dict else ep.constants
            if spec.target in source:
                tensors[spec.arg.name] = source[spec.target]

    def value(arg):
        if isinstance(arg, torch.fx.Node):
            return tensors.get(arg.name) if arg.op == "placeholder" else None
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            return torch.tensor(arg, dtype=torch.float64)
        return None

    return value


def _problems(node: torch.fx.Node, name: str, value) -> List[str]:
    layout = _LAYOUTS[name]
    args = list(node.args) + [None] * (max(layout.values()) + 1 - len(node.args))
    problems = []
    qmin, qmax = args[layout["qmin"]], args[layout["qmax"]]
    dtype = args[layout["dtype"]] if "dtype" in layout else None
    if qmin is None and dtype in _DTYPE_RANGE:  # torchao: the dtype's range
        qmin, qmax = _DTYPE_RANGE[dtype]
    if dtype in _DTYPE_RANGE and isinstance(qmin, int) and isinstance(qmax, int):
        lo, hi = _DTYPE_RANGE[dtype]
        if not lo <= qmin <= qmax <= hi:
            problems.append(
                f"quant_min {qmin} and quant_max {qmax} must be ordered and within "
                f"{dtype}'s range [{lo}, {hi}]"
            )
    scales = value(args[layout["scale"]])
    if scales is not None:
        flat = scales.detach().reshape(-1).double()
        bad = (~torch.isfinite(flat)) | (flat <= 0)
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            problems.append(
                f"scale {i} of {flat.numel()} is {flat[i].item()}; "
                "scales must be finite and > 0"
            )
    zero_points = value(args[layout["zp"]])
    is_integral = zero_points is not None and (
        not zero_points.dtype.is_floating_point
        or not isinstance(args[layout["zp"]], torch.fx.Node)
    )
    if is_integral and isinstance(qmin, int) and isinstance(qmax, int):
        flat = zero_points.detach().reshape(-1).double()
        bad = (flat < qmin) | (flat > qmax)
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            problems.append(
                f"zero point {i} of {flat.numel()} is {int(flat[i])}, outside "
                f"[quant_min, quant_max] = [{qmin}, {qmax}]"
            )
    if "group" in layout and args[layout["group"]] is not None:
        problems += _group_problems(node, args[layout["group"]], args[layout["scale"]])
    if name.startswith("embedding"):
        problems += _embedding_group_problems(node, name)
    return problems


def _shape(arg) -> Optional[torch.Size]:
    val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
    return val.shape if isinstance(val, torch.Tensor) else None


def _group_problems(node, group_size, scales) -> List[str]:
    shape, scale_shape = _shape(node.args[0]), _shape(scales)
    if shape is None or not isinstance(group_size, int) or not shape:
        return []
    width = shape[-1]
    if not isinstance(width, int):
        return []
    if group_size > width and scale_shape is not None and scale_shape[-1:] == (1,):
        return []  # one group per row, as torch reads it
    if group_size <= 1 or width % group_size:
        return [f"group_size {group_size} must be > 1 and divide the last dim {width}"]
    return []


def _embedding_group_problems(node, name: str) -> List[str]:
    weight, scales = _shape(node.args[0]), _shape(node.args[1])
    if weight is None or scales is None or len(weight) != 2:
        return []
    per_byte = {"embedding_4bit": 2, "embedding_2bit": 4}.get(name, 1)
    width = weight[1] * per_byte
    groups = scales[1] if len(scales) == 2 else 1
    if scales[0] != weight[0] or width % groups:
        return [
            f"weight_scales {list(scales)} must be [rows] or [rows, groups] with "
            f"groups dividing the row width {width} (weight {list(weight)})"
        ]
    return []


def _schema_name(node: torch.fx.Node) -> str:
    target = node.target
    return (target._op if isinstance(target, EdgeOpOverload) else target)._schema.name


def _checked_name(node: torch.fx.Node) -> Optional[str]:
    """The operator name (`quantize_per_tensor`) of a checked call."""
    target = node.target
    if isinstance(target, EdgeOpOverload):
        target = target._op
    if not isinstance(target, torch._ops.OpOverload):
        return None
    namespace, _, name = target._schema.name.partition("::")
    return name if namespace in _NAMESPACES and name in _LAYOUTS else None


def check_quantization_parameters(ep: ExportedProgram, method: str = "forward") -> None:
    """Raises QuantizationParameterError listing every quantize / dequantize
    call of `ep` with invalid parameters, with its node and source line."""
    value = _constant_of(ep)
    problems = []
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        name = _checked_name(node)
        if name is None:
            continue
        for problem in _problems(node, name, value):
            problems.append(
                f"  node '{node.name}' ({_schema_name(node)}, method '{method}'): "
                f"{problem}\n    at "
                + source_line(node).replace("\n", "\n    ")
            )
    if problems:
        raise QuantizationParameterError(
            "Invalid quantization parameters:\n" + "\n".join(problems)
        )


class CheckQuantizationParametersPass(ExportedProgramPassBase):
    """`check_quantization_parameters` as a step of a pipeline (it changes
    nothing; it raises on the first program with invalid parameters)."""

    def __init__(self, method: str = "forward"):
        self.method = method

    def call(self, exported_program: ExportedProgram) -> ExportedProgramPassResult:
        check_quantization_parameters(exported_program, self.method)
        return ExportedProgramPassResult(exported_program, False)
