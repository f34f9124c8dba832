"""Every error class of the SDK derives from `ExportError`: one `except`
clause catches them, each keeps its built-in base and its message."""

import pytest
import torch

from executorch.backends.xnnpack.lowering import XnnpackLoweringError
from executorch.devtools.bundled_program.serialize import BundledProgramError
from executorch.devtools.etdump.serialize import (
    ETDumpError,
    deserialize_from_etdump_flatcc,
)
from executorch.devtools.etrecord._etrecord import ETRecordError
from executorch.devtools.flatbuffer_codec import FlatBufferError, SchemaError
from executorch.devtools.inspector._events import DebugBufferError
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.backend.backend_api import PartitionError
from executorch.exir.emit._emitter import EmitError
from executorch.exir.error import (
    ExportError,
    ExportErrorType,
    InternalError,
    internal_assert,
)
from executorch.exir.kernel_check import MissingKernelError
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.passes.lower_control_flow_pass import ControlFlowError
from executorch.exir.passes.memory_planning_pass import MemoryBudgetError
from executorch.exir.passes.to_out_var_pass import OutVariantError
from executorch.exir.verification.quant_params import QuantizationParameterError

# Each class with the built-in base its handlers relied on before the root.
ERRORS = [
    (MissingKernelError, RuntimeError),
    (QuantizationParameterError, ValueError),
    (EmitError, RuntimeError),
    (PartitionError, ValueError),
    (MemoryBudgetError, ValueError),
    (OutVariantError, RuntimeError),
    (ControlFlowError, RuntimeError),
    (XnnpackLoweringError, ValueError),
    (BundledProgramError, ValueError),
    (DebugBufferError, ValueError),
    (ETRecordError, ValueError),
    (ETDumpError, ValueError),
    (SchemaError, ValueError),
    (FlatBufferError, ValueError),
]


@pytest.mark.parametrize("error_class, builtin_base", ERRORS)
def test_every_error_has_the_root_and_keeps_its_base(error_class, builtin_base):
    assert issubclass(error_class, ExportError)
    assert issubclass(error_class, builtin_base)
    assert isinstance(error_class.error_type, ExportErrorType)
    if error_class is not FlatBufferError:
        # Raised with a message only: the message is unchanged.
        assert str(error_class("what went wrong")) == "what went wrong"


def test_flatbuffer_error_keeps_its_field_and_message():
    error = FlatBufferError("run_data[0].events[3]", "offset past the end")
    assert str(error) == "run_data[0].events[3]: offset past the end"
    assert error.field == "run_data[0].events[3]"
    assert error.error_type is ExportErrorType.INVALID_INPUT_TYPE


def test_upstream_constructor_prefixes_the_error_type():
    error = ExportError(ExportErrorType.NOT_SUPPORTED, "no kernel for foo")
    assert str(error) == "[ExportErrorType.NOT_SUPPORTED]: no kernel for foo"
    assert error.error_type is ExportErrorType.NOT_SUPPORTED


def test_internal_assert_raises_internal_error_not_export_error():
    internal_assert(True, "holds")
    with pytest.raises(InternalError, match="spec lost") as error:
        internal_assert(False, "spec lost")
    assert not isinstance(error.value, ExportError)


class _Chain(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x + 1) * 2


def test_one_clause_catches_a_compiler_error_with_its_message():
    edge = to_edge(torch.export.export(_Chain(), (torch.randn(4, 4),)))
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(memory_budget=64)
    )
    with pytest.raises(ExportError, match="budget of 64 bytes") as error:
        edge.to_executorch(config)
    assert type(error.value) is MemoryBudgetError
    assert error.value.error_type is ExportErrorType.VIOLATION_OF_SPEC


def test_one_clause_catches_a_devtools_file_error_with_its_message():
    with pytest.raises(ExportError, match="model.etdp: not an ETDump") as error:
        deserialize_from_etdump_flatcc(b"\0" * 64, source="model.etdp")
    assert isinstance(error.value, ETDumpError)
