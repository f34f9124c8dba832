"""The base of the XNNPACK partitioner's per-operator configs, and the
precisions a config can be limited to (`XnnpackPartitioner(configs=...,
config_precisions=...)`)."""

from enum import Enum
from typing import ClassVar, List, Tuple

import torch
from torch.export import ExportedProgram

from executorch.exir.backend.canonical_partitioners.duplicate_dequant_node_pass import (
    is_dequantize,
)
from executorch.exir.dialects.edge._ops import to_aten_op


class ConfigPrecisionType(Enum):
    """What kind of arithmetic a node does: float, statically quantized
    (inputs dequantized with fixed parameters), or dynamically quantized
    (parameters chosen at run time by `choose_qparams`)."""

    FP32 = 1
    STATIC_QUANT = 2
    DYNAMIC_QUANT = 3


def _is_choose_qparams(node: torch.fx.Node) -> bool:
    name = getattr(to_aten_op(node.target), "__name__", "") or ""
    return node.op == "call_function" and "choose_qparams" in name


def node_precision(node: torch.fx.Node) -> ConfigPrecisionType:
    """The precision of `node`, from how its inputs were dequantized: a
    dequantize whose scale comes from `choose_qparams` (through getitem)
    is dynamic, any other dequantize static; no dequantize means float."""
    dequantized = [a for a in node.all_input_nodes if is_dequantize(a)]
    if not dequantized:
        return ConfigPrecisionType.FP32
    for dq in dequantized:
        for qparam in dq.all_input_nodes:
            sources = [qparam, *qparam.all_input_nodes]
            if any(_is_choose_qparams(s) for s in sources):
                return ConfigPrecisionType.DYNAMIC_QUANT
    return ConfigPrecisionType.STATIC_QUANT


class XNNPartitionerConfig:
    """Which operators one config lets the partitioner delegate.

    Subclasses set `target_name` (upstream's name of the main overload,
    e.g. "add.Tensor") and `targets` (the ATen overloads it covers; the
    Edge wrappers of the same overloads match too)."""

    target_name: ClassVar[str] = ""
    targets: ClassVar[Tuple[torch._ops.OpOverload, ...]] = ()

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def matches(self, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and to_aten_op(node.target) in self.targets

    def supported_precision_types(self) -> List[ConfigPrecisionType]:
        """The precisions this config delegates: float32 operators, and
        statically quantized ones (int8 XNNPACK operators where there is an
        int8 kernel, float32 between converts elsewhere; lowering/quant.py).
        Dynamically quantized linears run on our et_quantized kernels."""
        return [ConfigPrecisionType.FP32, ConfigPrecisionType.STATIC_QUANT]

    def check_constraints(self, node: torch.fx.Node, ep: ExportedProgram) -> bool:
        """True when the XNNPACK lowering accepts this node."""
        from executorch.backends.xnnpack.lowering import unsupported_reason

        return self.matches(node) and unsupported_reason(node, ep) is None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target_name})"
