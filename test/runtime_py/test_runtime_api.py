"""executorch.runtime: Runtime, Program and Method over our runtime."""

import io

import pytest

from executorch.runtime import Runtime, Verification

from .programs import assert_matches, eager


def test_runtime_is_a_singleton():
    assert Runtime.get() is Runtime.get()
    assert "aten::add.out" in Runtime.get().operator_registry.operator_names
    assert Runtime.get().backend_registry.is_available("NoSuchBackend") is False


@pytest.mark.parametrize("source", ["path", "bytes", "file"])
def test_load_and_execute(export_pte, tmp_path, source):
    pte = export_pte("add_with_parameter")
    path = tmp_path / "model.pte"
    path.write_bytes(pte)
    data = {"path": path, "bytes": pte, "file": io.BytesIO(pte)}[source]
    program = Runtime.get().load_program(data, verification=Verification.Minimal)
    assert program.method_names == {"forward"}
    method = program.load_method("forward")
    assert program.load_method("forward") is method
    inputs, expected = eager("add_with_parameter")
    assert_matches(method.execute(inputs), expected)
    assert method.metadata.num_inputs() == 2
    assert program.metadata("forward").num_outputs() == 1
    assert program.load_method("backward") is None


def test_load_program_rejects_bad_input():
    with pytest.raises(TypeError, match="got int"):
        Runtime.get().load_program(42)
    with pytest.raises(RuntimeError, match="InvalidProgram"):
        Runtime.get().load_program(b"\0" * 64)
