"""The `.pte` schema as Python classes, generated from schema/program.fbs by
flatc's object API into `generated/executorch_flatbuffer` (checked in; see
scripts/generate_flatbuffer_python.py).
"""

from .generated import executorch_flatbuffer as schema

# The object-API classes (`<Table>T`) and enums, one import per table module.
from .generated.executorch_flatbuffer.AllocationDetails import AllocationDetailsT
from .generated.executorch_flatbuffer.BackendDelegate import BackendDelegateT
from .generated.executorch_flatbuffer.BackendDelegateDataReference import (
    BackendDelegateDataReferenceT,
)
from .generated.executorch_flatbuffer.BackendDelegateInlineData import (
    BackendDelegateInlineDataT,
)
from .generated.executorch_flatbuffer.Bool import BoolT
from .generated.executorch_flatbuffer.BoolList import BoolListT
from .generated.executorch_flatbuffer.Chain import ChainT
from .generated.executorch_flatbuffer.CompileSpec import CompileSpecT
from .generated.executorch_flatbuffer.ContainerMetadata import ContainerMetadataT
from .generated.executorch_flatbuffer.DataLocation import DataLocation
from .generated.executorch_flatbuffer.DataSegment import DataSegmentT
from .generated.executorch_flatbuffer.DelegateCall import DelegateCallT
from .generated.executorch_flatbuffer.Double import DoubleT
from .generated.executorch_flatbuffer.DoubleList import DoubleListT
from .generated.executorch_flatbuffer.EValue import EValueT
from .generated.executorch_flatbuffer.ExecutionPlan import ExecutionPlanT
from .generated.executorch_flatbuffer.ExtraTensorInfo import ExtraTensorInfoT
from .generated.executorch_flatbuffer.Frame import FrameT
from .generated.executorch_flatbuffer.FrameList import FrameListT
from .generated.executorch_flatbuffer.FreeCall import FreeCallT
from .generated.executorch_flatbuffer.Instruction import InstructionT
from .generated.executorch_flatbuffer.InstructionArguments import (
    InstructionArguments,
)
from .generated.executorch_flatbuffer.Int import IntT
from .generated.executorch_flatbuffer.IntList import IntListT
from .generated.executorch_flatbuffer.JumpFalseCall import JumpFalseCallT
from .generated.executorch_flatbuffer.KernelCall import KernelCallT
from .generated.executorch_flatbuffer.KernelTypes import KernelTypes
from .generated.executorch_flatbuffer.MoveCall import MoveCallT
from .generated.executorch_flatbuffer.NamedData import NamedDataT
from .generated.executorch_flatbuffer.Null import NullT
from .generated.executorch_flatbuffer.Operator import OperatorT
from .generated.executorch_flatbuffer.OptionalTensorList import OptionalTensorListT
from .generated.executorch_flatbuffer.Program import Program, ProgramT
from .generated.executorch_flatbuffer.ScalarType import ScalarType
from .generated.executorch_flatbuffer.String import StringT
from .generated.executorch_flatbuffer.SubsegmentOffsets import SubsegmentOffsetsT
from .generated.executorch_flatbuffer.Tensor import TensorT
from .generated.executorch_flatbuffer.TensorDataLocation import TensorDataLocation
from .generated.executorch_flatbuffer.TensorList import TensorListT
from .generated.executorch_flatbuffer.TensorShapeDynamism import (
    TensorShapeDynamism,
)
