"""The XNNPACK partitioner's per-operator configs (upstream's names).

`XnnpackPartitioner(configs=[AddConfig, LinearConfig])` delegates only
those operators; the default is `ALL_PARTITIONER_CONFIGS`, which covers
every operator the XNNPACK lowering supports (a test keeps it so)."""

from typing import List, Type

import torch
from torch.ao.quantization.fx import _decomposed  # noqa: F401 (defines the quantize ops)

from executorch.backends.xnnpack.partition.config.xnnpack_config import (
    ConfigPrecisionType,
    XNNPartitionerConfig,
)

aten = torch.ops.aten


def _config(name: str, target_name: str, *targets) -> Type[XNNPartitionerConfig]:
    """A config class covering `targets`."""
    return type(
        name,
        (XNNPartitionerConfig,),
        {"target_name": target_name, "targets": tuple(targets), "__module__": __name__},
    )


# Elementwise math and activations.
AbsConfig = _config("AbsConfig", "abs.default", aten.abs.default)
AddConfig = _config("AddConfig", "add.Tensor", aten.add.Tensor, aten.add.Scalar)
CeilConfig = _config("CeilConfig", "ceil.default", aten.ceil.default)
ClampConfig = _config("ClampConfig", "clamp.default", aten.clamp.default)
CosConfig = _config("CosConfig", "cos.default", aten.cos.default)
DivConfig = _config("DivConfig", "div.Tensor", aten.div.Tensor, aten.div.Scalar)
EluConfig = _config("EluConfig", "elu.default", aten.elu.default)
ExpConfig = _config("ExpConfig", "exp.default", aten.exp.default)
FloorConfig = _config("FloorConfig", "floor.default", aten.floor.default)
GeluConfig = _config("GeluConfig", "gelu.default", aten.gelu.default)
HardswishConfig = _config(
    "HardswishConfig", "hardswish.default", aten.hardswish.default
)
HardtanhConfig = _config("HardtanhConfig", "hardtanh.default", aten.hardtanh.default)
LeakyReLUConfig = _config(
    "LeakyReLUConfig", "leaky_relu.default", aten.leaky_relu.default
)
LogConfig = _config("LogConfig", "log.default", aten.log.default)
MaximumConfig = _config("MaximumConfig", "maximum.default", aten.maximum.default)
MinimumConfig = _config("MinimumConfig", "minimum.default", aten.minimum.default)
MulConfig = _config("MulConfig", "mul.Tensor", aten.mul.Tensor, aten.mul.Scalar)
NegConfig = _config("NegConfig", "neg.default", aten.neg.default)
PowConfig = _config("PowConfig", "pow.Tensor_Scalar", aten.pow.Tensor_Scalar)
PreluConfig = _config(
    "PreluConfig", "prelu.default", aten._prelu_kernel.default, aten.prelu.default
)
ReciprocalSquareRootConfig = _config(
    "ReciprocalSquareRootConfig", "rsqrt.default", aten.rsqrt.default
)
ReLUConfig = _config("ReLUConfig", "relu.default", aten.relu.default)
SigmoidConfig = _config("SigmoidConfig", "sigmoid.default", aten.sigmoid.default)
SinConfig = _config("SinConfig", "sin.default", aten.sin.default)
SquareRootConfig = _config("SquareRootConfig", "sqrt.default", aten.sqrt.default)
SubConfig = _config("SubConfig", "sub.Tensor", aten.sub.Tensor, aten.sub.Scalar)
TanhConfig = _config("TanhConfig", "tanh.default", aten.tanh.default)

# Matrix products and convolutions.
AddmmConfig = _config("AddmmConfig", "addmm.default", aten.addmm.default)
BMMConfig = _config("BMMConfig", "bmm.default", aten.bmm.default)
ConvolutionConfig = _config(
    "ConvolutionConfig", "convolution.default", aten.convolution.default
)
LinearConfig = _config("LinearConfig", "linear.default", aten.linear.default)
MMConfig = _config("MMConfig", "mm.default", aten.mm.default)

# Normalization and pooling.
AvgPoolingConfig = _config(
    "AvgPoolingConfig", "avg_pool2d.default", aten.avg_pool2d.default
)
BatchNormConfig = _config(
    "BatchNormConfig",
    "_native_batch_norm_legit_no_training.default",
    aten._native_batch_norm_legit_no_training.default,
)
LayerNormConfig = _config(
    "LayerNormConfig", "native_layer_norm.default", aten.native_layer_norm.default
)
MaxPool2dConfig = _config(
    "MaxPool2dConfig",
    "max_pool2d.default",
    aten.max_pool2d.default,
    aten.max_pool2d_with_indices.default,
)
MeanDimConfig = _config(
    "MeanDimConfig",
    "mean.dim",
    aten.mean.dim,
    aten._adaptive_avg_pool2d.default,
    aten.adaptive_avg_pool2d.default,
)
SoftmaxConfig = _config(
    "SoftmaxConfig",
    "_softmax.default",
    aten._softmax.default,
    aten._safe_softmax.default,
)
UpsampleBilinear2dConfig = _config(
    "UpsampleBilinear2dConfig",
    "upsample_bilinear2d.vec",
    aten.upsample_bilinear2d.default,
    aten.upsample_bilinear2d.vec,
)

# Data movement.
CatConfig = _config("CatConfig", "cat.default", aten.cat.default)
ConstantPadConfig = _config(
    "ConstantPadConfig", "constant_pad_nd.default", aten.constant_pad_nd.default
)
ExpandCopyConfig = _config(
    "ExpandCopyConfig",
    "expand_copy.default",
    aten.expand.default,
    aten.expand_copy.default,
)
PermuteConfig = _config(
    "PermuteConfig",
    "permute_copy.default",
    aten.permute.default,
    aten.permute_copy.default,
    aten.t.default,
    aten.t_copy.default,
    aten.transpose.int,
    aten.transpose_copy.int,
)
SelectCopyConfig = _config(
    "SelectCopyConfig", "select_copy.int", aten.select.int, aten.select_copy.int
)
SliceCopyConfig = _config(
    "SliceCopyConfig", "slice_copy.Tensor", aten.slice.Tensor, aten.slice_copy.Tensor
)
CloneConfig = _config(
    "CloneConfig",
    "clone.default",
    aten.clone.default,
    aten.alias.default,
    aten.alias_copy.default,
)
ViewCopyConfig = _config(
    "ViewCopyConfig",
    "view_copy.default",
    aten.view.default,
    aten.view_copy.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.squeeze.dims,
    aten.squeeze_copy.dims,
    aten.squeeze.dim,
    aten.squeeze_copy.dim,
    aten.unsqueeze.default,
    aten.unsqueeze_copy.default,
)

# Quantize and dequantize steps of statically quantized programs.
QuantizedPerTensorConfig = _config(
    "QuantizedPerTensorConfig",
    "quantize_per_tensor.default",
    torch.ops.quantized_decomposed.quantize_per_tensor.default,
)
DeQuantizedPerTensorConfig = _config(
    "DeQuantizedPerTensorConfig",
    "dequantize_per_tensor.default",
    torch.ops.quantized_decomposed.dequantize_per_tensor.default,
)

ALL_PARTITIONER_CONFIGS: List[Type[XNNPartitionerConfig]] = [
    AbsConfig,
    AddConfig,
    AddmmConfig,
    AvgPoolingConfig,
    BatchNormConfig,
    BMMConfig,
    CatConfig,
    CeilConfig,
    ClampConfig,
    CloneConfig,
    ConstantPadConfig,
    ConvolutionConfig,
    CosConfig,
    DeQuantizedPerTensorConfig,
    DivConfig,
    EluConfig,
    ExpConfig,
    ExpandCopyConfig,
    FloorConfig,
    GeluConfig,
    HardswishConfig,
    HardtanhConfig,
    LayerNormConfig,
    LeakyReLUConfig,
    LinearConfig,
    LogConfig,
    MaximumConfig,
    MaxPool2dConfig,
    MeanDimConfig,
    MinimumConfig,
    MMConfig,
    MulConfig,
    NegConfig,
    PermuteConfig,
    PowConfig,
    PreluConfig,
    QuantizedPerTensorConfig,
    ReciprocalSquareRootConfig,
    ReLUConfig,
    SelectCopyConfig,
    SigmoidConfig,
    SinConfig,
    SliceCopyConfig,
    SoftmaxConfig,
    SquareRootConfig,
    SubConfig,
    TanhConfig,
    UpsampleBilinear2dConfig,
    ViewCopyConfig,
]

__all__ = [
    "ALL_PARTITIONER_CONFIGS",
    "ConfigPrecisionType",
    "XNNPartitionerConfig",
    *(c.__name__ for c in ALL_PARTITIONER_CONFIGS),
]
