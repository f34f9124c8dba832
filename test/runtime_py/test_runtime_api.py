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


@pytest.mark.parametrize(
    "name", ["mlp", "integer_and_bool", "half_and_uint8", "channels_last"]
)
def test_methods_match_eager(export_pte, name):
    program = Runtime.get().load_program(export_pte(name))
    method = program.load_method("forward")
    inputs, expected = eager(name)
    assert_matches(method.execute(inputs), expected)
    meta = method.metadata
    assert meta.num_inputs() == len(inputs)
    assert meta.num_outputs() == len(expected)
    for i, tensor in enumerate(inputs):
        assert list(meta.input_tensor_meta(i).sizes()) == list(tensor.shape)


def test_registries_list_what_is_linked():
    operators = Runtime.get().operator_registry.operator_names
    assert {"aten::add.out", "aten::mm.out", "aten::relu.out"} <= operators
    assert all("::" in name for name in operators)
    backends = Runtime.get().backend_registry
    names = backends.registered_backend_names
    assert isinstance(names, list)
    for name in names:
        assert backends.is_available(name)


def test_bad_inputs_name_the_input_and_the_expectation(export_pte):
    method = Runtime.get().load_program(export_pte("mlp")).load_method("forward")
    (x,), _ = eager("mlp")
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        method.execute([x, x])
    with pytest.raises(RuntimeError, match="input 0: expected dtype Float .*got Long"):
        method.execute([x.long()])
    with pytest.raises(RuntimeError, match="input 0: .*expected size 5, got 2"):
        method.execute([x[:2]])


def test_load_program_reports_a_missing_file(tmp_path):
    with pytest.raises(RuntimeError, match="NotFound.*missing.pte"):
        Runtime.get().load_program(tmp_path / "missing.pte")
