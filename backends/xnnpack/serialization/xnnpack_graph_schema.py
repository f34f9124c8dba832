"""The XNNPACK graph schema as Python classes, generated from
xnnpack_graph.fbs.

flatc's object API writes them into `generated/xnnpack_graph` (checked in;
see scripts/generate_flatbuffer_python.py).
"""

# The object-API classes (`<Table>T`) and enums, one import per module.
from .generated.xnnpack_graph.ConcatenateParams import ConcatenateParamsT
from .generated.xnnpack_graph.ConstantPadParams import ConstantPadParamsT
from .generated.xnnpack_graph.ConstantRef import ConstantRefT
from .generated.xnnpack_graph.Conv2dParams import Conv2dParamsT
from .generated.xnnpack_graph.DataType import DataType
from .generated.xnnpack_graph.FullyConnectedParams import FullyConnectedParamsT
from .generated.xnnpack_graph.GeluParams import GeluParamsT
from .generated.xnnpack_graph.LayerNormParams import LayerNormParamsT
from .generated.xnnpack_graph.Graph import Graph, GraphT
from .generated.xnnpack_graph.Node import NodeT
from .generated.xnnpack_graph.NodeKind import NodeKind
from .generated.xnnpack_graph.NodeParams import NodeParams
from .generated.xnnpack_graph.OutputClamp import OutputClampT
from .generated.xnnpack_graph.PerChannelQuant import PerChannelQuantT
from .generated.xnnpack_graph.PerTensorQuant import PerTensorQuantT
from .generated.xnnpack_graph.Pool2dParams import Pool2dParamsT
from .generated.xnnpack_graph.Quantization import Quantization
from .generated.xnnpack_graph.ReshapeParams import ReshapeParamsT
from .generated.xnnpack_graph.ResizeBilinear2dParams import ResizeBilinear2dParamsT
from .generated.xnnpack_graph.ScalarParams import ScalarParamsT
from .generated.xnnpack_graph.SliceMode import SliceMode
from .generated.xnnpack_graph.SliceParams import SliceParamsT
from .generated.xnnpack_graph.TransposeParams import TransposeParamsT
from .generated.xnnpack_graph.Value import ValueT
from .generated.xnnpack_graph.ValueFlags import ValueFlags

__all__ = [
    "ConcatenateParamsT",
    "ConstantPadParamsT",
    "ConstantRefT",
    "Conv2dParamsT",
    "DataType",
    "FullyConnectedParamsT",
    "GeluParamsT",
    "Graph",
    "GraphT",
    "LayerNormParamsT",
    "NodeKind",
    "NodeParams",
    "NodeT",
    "OutputClampT",
    "PerChannelQuantT",
    "PerTensorQuantT",
    "Pool2dParamsT",
    "Quantization",
    "ReshapeParamsT",
    "ResizeBilinear2dParamsT",
    "ScalarParamsT",
    "SliceMode",
    "SliceParamsT",
    "TransposeParamsT",
    "ValueFlags",
    "ValueT",
]
