"""XNNPACKQuantizer: the PT2E quantizer for programs the XNNPACK backend
(and the portable `quantized_decomposed` kernels) run in int8.

Used with torchao's PT2E entry points, as with upstream ExecuTorch:

    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True))
    graph = torch.export.export(model, inputs).module()
    prepared = prepare_pt2e(graph, quantizer)      # or prepare_qat_pt2e
    prepared(*calibration_inputs)
    converted = convert_pt2e(prepared)

Which configuration applies to a node: the one set for the innermost
module name that contains it (`set_module_name`), else for the innermost
module type (`set_module_type`), else for its operator
(`set_operator_type`), else the global one. A configuration of None leaves
those nodes in fp32.
"""

import functools
from typing import Callable, Dict, List, Optional

import torch
from torch.fx import Node
from torchao.quantization.pt2e import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
)
from torchao.quantization.pt2e.quantizer import (
    OperatorConfig,
    QuantizationConfig,
    QuantizationSpec,
    Quantizer,
)

from executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils import (
    ANNOTATORS,
    annotate_node,
)

__all__ = ["XNNPACKQuantizer", "get_symmetric_quantization_config"]

# The smallest scale an activation observer picks (guards all-zero ranges).
_ACTIVATION_EPS = 2**-12


@functools.lru_cache
def get_symmetric_quantization_config(
    is_per_channel: bool = False,
    is_qat: bool = False,
    is_dynamic: bool = False,
    act_qmin: int = -128,
    act_qmax: int = 127,
    weight_qmin: int = -127,
    weight_qmax: int = 127,
) -> QuantizationConfig:
    """int8 activations (affine, per tensor) and symmetric int8 weights (per
    tensor, or per output channel with `is_per_channel`); fp32 bias.

    `is_dynamic`: activations are quantized per call from their own range
    (only linear layers are quantized, with fp32 outputs). `is_qat`: fake
    quantization for quantization-aware training (`prepare_qat_pt2e`).
    The qmin/qmax arguments narrow the ranges (e.g. weight -8..7 for 4-bit
    values stored in int8)."""
    if is_qat:
        if is_dynamic:
            # Averaging constant 1: the range is the current batch's.
            activation_ctr = FakeQuantize.with_args(
                observer=MovingAverageMinMaxObserver.with_args(averaging_constant=1),
                eps=_ACTIVATION_EPS,
            )
        else:
            activation_ctr = FusedMovingAvgObsFakeQuantize.with_args(
                observer=MovingAverageMinMaxObserver, eps=_ACTIVATION_EPS
            )
        weight_observer = (
            MovingAveragePerChannelMinMaxObserver
            if is_per_channel
            else MovingAverageMinMaxObserver
        )
        weight_ctr = FusedMovingAvgObsFakeQuantize.with_args(
            observer=weight_observer, eps=_ACTIVATION_EPS
        )
    else:
        activation_ctr = (PlaceholderObserver if is_dynamic else HistogramObserver).with_args(
            eps=_ACTIVATION_EPS
        )
        weight_ctr = (
            PerChannelMinMaxObserver if is_per_channel else MinMaxObserver
        ).with_args(eps=_ACTIVATION_EPS)

    activation = QuantizationSpec(
        dtype=torch.int8,
        quant_min=act_qmin,
        quant_max=act_qmax,
        qscheme=torch.per_tensor_affine,
        is_dynamic=is_dynamic,
        observer_or_fake_quant_ctr=activation_ctr,
    )
    weight = QuantizationSpec(
        dtype=torch.int8,
        quant_min=weight_qmin,
        quant_max=weight_qmax,
        qscheme=(
            torch.per_channel_symmetric if is_per_channel else torch.per_tensor_symmetric
        ),
        ch_axis=0,
        is_dynamic=False,
        observer_or_fake_quant_ctr=weight_ctr,
    )
    return QuantizationConfig(
        input_activation=activation,
        output_activation=None if is_dynamic else activation,
        weight=weight,
        bias=None,
        is_qat=is_qat,
    )


def _module_stack(node: Node) -> List[tuple]:
    """(fully qualified name, type name) of the modules that produced `node`,
    outermost first."""
    entries = []
    for path, module_type in node.meta.get("nn_module_stack", {}).values():
        if path.startswith("L['self']."):
            path = path[len("L['self'].") :]
        if isinstance(module_type, type):
            module_type = f"{module_type.__module__}.{module_type.__qualname__}"
        entries.append((path, module_type))
    return entries


def _type_name(module_type: Callable) -> str:
    return f"{module_type.__module__}.{module_type.__qualname__}"


_UNSET = object()


class XNNPACKQuantizer(Quantizer):
    """Annotates conv (with batch norm and ReLU), transposed conv, linear,
    add, mul, pools, mean, hardswish, sigmoid, softmax, cat and the shape
    operators between quantized operators, for int8 PT2E quantization."""

    def __init__(self) -> None:
        super().__init__()
        self.global_config: Optional[QuantizationConfig] = None
        self.operator_type_config: Dict[object, Optional[QuantizationConfig]] = {}
        self.module_type_config: Dict[str, Optional[QuantizationConfig]] = {}
        self.module_name_config: Dict[str, Optional[QuantizationConfig]] = {}

    @classmethod
    def get_supported_quantization_configs(cls) -> List[QuantizationConfig]:
        return [
            get_symmetric_quantization_config(is_per_channel=per_channel, is_qat=qat)
            for per_channel in (False, True)
            for qat in (False, True)
        ] + [get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True)]

    @classmethod
    def get_supported_operators(cls) -> List[OperatorConfig]:
        operators = [[target] for target in ANNOTATORS]
        return [
            OperatorConfig(config, operators)
            for config in cls.get_supported_quantization_configs()
        ]

    def set_global(self, quantization_config: Optional[QuantizationConfig]):
        self.global_config = quantization_config
        return self

    def set_operator_type(
        self, operator_type, quantization_config: Optional[QuantizationConfig]
    ):
        """`operator_type`: an aten operator (`torch.ops.aten.linear.default`
        or its packet `torch.ops.aten.linear`)."""
        self.operator_type_config[operator_type] = quantization_config
        return self

    def set_module_type(
        self, module_type: Callable, quantization_config: Optional[QuantizationConfig]
    ):
        """Nodes inside any module of this class (e.g. `torch.nn.Linear`)."""
        self.module_type_config[_type_name(module_type)] = quantization_config
        return self

    def set_module_name(
        self, module_name: str, quantization_config: Optional[QuantizationConfig]
    ):
        """Nodes inside the submodule with this fully qualified name (e.g.
        `"blocks.0.attn"`), at any depth."""
        self.module_name_config[module_name] = quantization_config
        return self

    def _config_for(self, node: Node) -> Optional[QuantizationConfig]:
        stack = _module_stack(node)
        for path, _ in reversed(stack):
            if path in self.module_name_config:
                return self.module_name_config[path]
        for _, module_type in reversed(stack):
            if module_type in self.module_type_config:
                return self.module_type_config[module_type]
        target = node.target
        for key in (target, getattr(target, "overloadpacket", _UNSET)):
            if key in self.operator_type_config:
                return self.operator_type_config[key]
        return self.global_config

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        for node in model.graph.nodes:
            config = self._config_for(node)
            if config is not None:
                annotate_node(node, config)
        return model

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass
