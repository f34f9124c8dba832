"""The XNNPACK delegate's graph schema (schema.fbs, upstream ExecuTorch's
wire format) as Python classes.

flatc's object API writes them into `generated/fb_xnnpack` (checked in; see
scripts/generate_flatbuffer_python.py).
"""

# The object-API classes (`<Table>T`) and enums, one import per module.
from .generated.fb_xnnpack.ConstantDataOffset import ConstantDataOffsetT
from .generated.fb_xnnpack.DimSource import DimSource
from .generated.fb_xnnpack.OutputMinMax import OutputMinMaxT
from .generated.fb_xnnpack.PerChannelGroupQuant import PerChannelGroupQuantT
from .generated.fb_xnnpack.PerChannelQuant import PerChannelQuantT
from .generated.fb_xnnpack.PerTensorQuant import PerTensorQuantT
from .generated.fb_xnnpack.PerTokenDynamicQuant import PerTokenDynamicQuantT
from .generated.fb_xnnpack.SliceMode import SliceMode
from .generated.fb_xnnpack.XNNArgMaxPooling2d import XNNArgMaxPooling2dT
from .generated.fb_xnnpack.XNNDatatype import XNNDatatype
from .generated.fb_xnnpack.XNNELU import XNNELUT
from .generated.fb_xnnpack.XNNFullyConnected import XNNFullyConnectedT
from .generated.fb_xnnpack.XNNGraph import XNNGraph, XNNGraphT
from .generated.fb_xnnpack.XNNLeakyReLU import XNNLeakyReLUT
from .generated.fb_xnnpack.XNNQuantizedTensorValue import XNNQuantizedTensorValueT
from .generated.fb_xnnpack.XNNQuantParams import XNNQuantParams
from .generated.fb_xnnpack.XNNStaticConstantPad import XNNStaticConstantPadT
from .generated.fb_xnnpack.XNNStaticReshape import XNNStaticReshapeT
from .generated.fb_xnnpack.XNNStaticResizeBilinear2D import (
    XNNStaticResizeBilinear2DT,
)
from .generated.fb_xnnpack.XNNStaticSlice import XNNStaticSliceT
from .generated.fb_xnnpack.XNNStaticTranspose import XNNStaticTransposeT
from .generated.fb_xnnpack.XNNTensorValue import XNNTensorValueT
from .generated.fb_xnnpack.XNode import XNodeT
from .generated.fb_xnnpack.XNodeUnion import XNodeUnion
from .generated.fb_xnnpack.XValue import XValueT
from .generated.fb_xnnpack.XValueUnion import XValueUnion
from .generated.fb_xnnpack._XNNCat import _XNNCatT
from .generated.fb_xnnpack._XNNNode1x1 import _XNNNode1x1T
from .generated.fb_xnnpack._XNNNode2x1 import _XNNNode2x1T
from .generated.fb_xnnpack._XNNNodeConv import _XNNNodeConvT
from .generated.fb_xnnpack._XNNPooling2D import _XNNPooling2DT

# flatc 2.0.8 names each union's creator function in one case and calls it
# in another (XnodeUnionCreator vs XNodeUnionCreator); reading a blob back
# needs the name it calls.
from .generated import fb_xnnpack

for _module, _called, _defined in (
    (fb_xnnpack.XNodeUnion, "XNodeUnionCreator", "XnodeUnionCreator"),
    (fb_xnnpack.XValueUnion, "XValueUnionCreator", "XvalueUnionCreator"),
    (fb_xnnpack.XNNQuantParams, "XNNQuantParamsCreator", "XnnquantParamsCreator"),
):
    if not hasattr(_module, _called):
        setattr(_module, _called, getattr(_module, _defined))

# XNNPACK's flags and ids (xnnpack.h), as blobs carry them.
XNN_INVALID_VALUE_ID = 0xFFFFFFFF
XNN_VALUE_FLAG_EXTERNAL_INPUT = 0x1
XNN_VALUE_FLAG_EXTERNAL_OUTPUT = 0x2
XNN_FLAG_TRANSPOSE_WEIGHTS = 0x1
XNN_FLAG_ALIGN_CORNERS = 0x8
XNN_FLAG_KEEP_DIMS = 0x40

__all__ = [
    "ConstantDataOffsetT",
    "DimSource",
    "OutputMinMaxT",
    "PerChannelGroupQuantT",
    "PerChannelQuantT",
    "PerTensorQuantT",
    "PerTokenDynamicQuantT",
    "SliceMode",
    "XNNArgMaxPooling2dT",
    "XNNDatatype",
    "XNNELUT",
    "XNNFullyConnectedT",
    "XNNGraph",
    "XNNGraphT",
    "XNNLeakyReLUT",
    "XNNQuantizedTensorValueT",
    "XNNQuantParams",
    "XNNStaticConstantPadT",
    "XNNStaticReshapeT",
    "XNNStaticResizeBilinear2DT",
    "XNNStaticSliceT",
    "XNNStaticTransposeT",
    "XNNTensorValueT",
    "XNodeT",
    "XNodeUnion",
    "XValueT",
    "XValueUnion",
    "_XNNCatT",
    "_XNNNode1x1T",
    "_XNNNode2x1T",
    "_XNNNodeConvT",
    "_XNNPooling2DT",
    "XNN_INVALID_VALUE_ID",
    "XNN_VALUE_FLAG_EXTERNAL_INPUT",
    "XNN_VALUE_FLAG_EXTERNAL_OUTPUT",
    "XNN_FLAG_TRANSPOSE_WEIGHTS",
    "XNN_FLAG_ALIGN_CORNERS",
    "XNN_FLAG_KEEP_DIMS",
]
