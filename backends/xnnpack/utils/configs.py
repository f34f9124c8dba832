"""The compile configurations upstream's XNNPACK examples pass to each
stage: `to_edge(..., compile_config=get_xnnpack_edge_compile_config())`,
`edge.transform(get_transform_passes())` and
`to_executorch(get_xnnpack_executorch_backend_config())`."""

from typing import List, Optional

from executorch.exir.backend.canonical_partitioners.duplicate_dequant_node_pass import (
    DuplicateDequantNodePass,
)
from executorch.exir.capture._config import (
    CaptureConfig,
    EdgeCompileConfig,
    ExecutorchBackendConfig,
)
from executorch.exir.pass_manager import PassType


def get_xnnpack_edge_compile_config() -> EdgeCompileConfig:
    """Edge options for XNNPACK: operators outside Core ATen are allowed
    (the partitioner may take operators it keeps whole)."""
    return EdgeCompileConfig(_check_ir_validity=False)


def get_transform_passes(additional_passes=None) -> List[PassType]:
    """`additional_passes`, then a pass giving every user of a dequantize
    node its own copy, so that partitions never share one."""
    return list(additional_passes or []) + [DuplicateDequantNodePass()]


def get_xnnpack_executorch_backend_config(
    additional_passes=None,
) -> ExecutorchBackendConfig:
    """`to_executorch` options for XNNPACK: the user passes, and delegate
    blobs in segments of their own."""
    return ExecutorchBackendConfig(
        passes=list(additional_passes or []),
        extract_delegate_segments=True,
    )


def get_xnnpack_capture_config(
    dynamic_shape: bool = False,
    enable_aot: Optional[bool] = None,
    unlift: Optional[bool] = None,
) -> CaptureConfig:
    """The legacy capture options for XNNPACK; `unlift` follows
    `enable_aot` unless given."""
    if enable_aot is None:
        return CaptureConfig(enable_dynamic_shape=dynamic_shape)
    return CaptureConfig(
        enable_dynamic_shape=dynamic_shape,
        enable_aot=enable_aot,
        _unlift=enable_aot if unlift is None else unlift,
    )
