"""Tests for the kernel registration generator (needs PyYAML only)."""

import os

import pytest

from executorch.codegen import gen
from executorch.codegen.schema import load_schema_file, parse_schema

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "aten_schemas.txt")
PORTABLE_YAML = os.path.join(
    os.path.dirname(__file__), "..", "..", "kernels", "portable", "functions.yaml"
)


def test_parses_out_variant_with_kwargs_and_defaults():
    s = parse_schema(
        "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
        "Tensor(a!) out) -> Tensor(a!)"
    )
    assert s.qualified_name == "aten::add.out"
    assert [a.name for a in s.arguments] == ["self", "other", "alpha", "out"]
    assert s.arguments[2].kwarg_only and s.arguments[2].default == "1"
    assert [a.name for a in s.out_arguments] == ["out"]
    assert s.returns[0].mutable


def test_parses_lists_optionals_and_tuple_returns():
    s = parse_schema(
        "max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, "
        "int[2] stride=[], int[2] padding=0, *, Tensor(a!) out, "
        "Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))"
    )
    assert s.namespace == "aten"
    assert s.arguments[1].type.is_list
    assert len(s.returns) == 2
    t = parse_schema("f.x(Tensor?[] indices, int[1]? dim) -> ()")
    assert t.arguments[0].type.elem_optional and not t.arguments[0].type.optional
    assert t.arguments[1].type.optional and t.arguments[1].type.is_list
    assert t.returns == ()


def test_wrapper_unboxes_in_schema_order_and_calls_native_namespace():
    schemas = load_schema_file(SCHEMAS)
    entries = gen.parse_functions_yaml(
        "- op: add.out\n  kernels:\n    - arg_meta: null\n"
        "      kernel_name: torch::executor::add_out\n",
        schemas,
    )
    code = gen.gen_registration(entries, "ns::register_them", "NativeFunctions.h")
    assert "torch::executor::native::add_out(" in code
    assert "(*stack[0]).toTensor()" in code
    assert "(*stack[2]).toScalar()" in code
    assert '"aten::add.out"' in code
    assert "::executorch::runtime::Error register_them()" in code
    decls = gen.gen_declarations(entries)
    assert (
        "Tensor& add_out(KernelRuntimeContext& context, const Tensor& self, "
        "const Tensor& other, const Scalar& alpha, Tensor& out);" in decls
    )


def test_custom_op_from_func_entry():
    entries = gen.parse_functions_yaml(
        "- func: custom::scale.out(Tensor x, float k, *, Tensor(a!) out) "
        "-> Tensor(a!)\n  kernels:\n    - arg_meta: null\n"
        "      kernel_name: custom::scale_out\n",
        {},
    )
    code = gen.gen_registration(entries, "register_custom", "NativeFunctions.h")
    assert "custom::native::scale_out(" in code
    assert "to_double((*stack[1]))" in code


def test_load_check_is_declared_and_registered_with_the_schema():
    entries = gen.parse_functions_yaml(
        "- func: custom::scale.out(Tensor x, float k, *, Tensor(a!) out) "
        "-> Tensor(a!)\n  kernels:\n    - arg_meta: null\n"
        "      kernel_name: custom::scale_out\n"
        "  load_check: custom::scale_out_check\n",
        {},
    )
    code = gen.gen_registration(entries, "register_custom", "NativeFunctions.h")
    assert '{"custom::scale.out", Span<const ArgKind>(' in code
    # Argument 2 (`out`, marked `!`) is the one the kernel writes.
    assert ", &custom::native::scale_out_check, uint64_t{0x4}}," in code
    decls = gen.gen_declarations(entries)
    assert (
        "bool scale_out_check(::executorch::runtime::Span<::executorch::runtime::EValue* const> args,"
        " const bool* fixed);" in decls
    )
    # Without one, the schema has none.
    plain = gen.parse_functions_yaml(
        "- func: custom::scale.out(Tensor x, float k, *, Tensor(a!) out) "
        "-> Tensor(a!)\n  kernels:\n    - arg_meta: null\n"
        "      kernel_name: custom::scale_out\n",
        {},
    )
    assert "_check" not in gen.gen_registration(plain, "register_custom", "NativeFunctions.h")


def test_schema_marks_the_arguments_the_kernel_writes():
    entries = gen.parse_functions_yaml(
        "- func: custom::split.out(Tensor(a!) x, int n, *, Tensor(b!)[] out, "
        "Tensor(c!) extra) -> ()\n  kernels:\n    - arg_meta: null\n"
        "      kernel_name: custom::split_out\n",
        {},
    )
    code = gen.gen_registration(entries, "register_custom", "NativeFunctions.h")
    # Arguments 0, 2 and 3 are marked `!`: bits 0b1101.
    assert "nullptr, uint64_t{0xd}}," in code


def test_unknown_op_and_unsupported_arg_meta_are_errors():
    with pytest.raises(gen.GenError, match="no schema"):
        gen.parse_functions_yaml(
            "- op: nope.out\n  kernels:\n    - arg_meta: null\n"
            "      kernel_name: a::b\n",
            {},
        )
    with pytest.raises(gen.GenError, match="arg_meta"):
        gen.parse_functions_yaml(
            "- func: a::b(Tensor x) -> Tensor\n  kernels:\n"
            "    - arg_meta: {x: [Float]}\n      kernel_name: a::b\n",
            {},
        )


def test_root_ops_select_a_subset_and_reject_unknown_names():
    schemas = load_schema_file(SCHEMAS)
    with open(PORTABLE_YAML) as f:
        entries = gen.parse_functions_yaml(f.read(), schemas)
    chosen = gen.select_entries(entries, ["add.out", "aten::mm.out"])
    assert [e.schema.qualified_name for e in chosen] == [
        "aten::add.out",
        "aten::mm.out",
    ]
    with pytest.raises(gen.GenError, match="aten::fft.out"):
        gen.select_entries(entries, ["fft.out"])


def test_every_portable_entry_generates(tmp_path):
    gen.main(
        [
            "--functions-yaml",
            PORTABLE_YAML,
            "--schemas",
            SCHEMAS,
            "--output-dir",
            str(tmp_path),
            "--register-function",
            "executorch::kernels::register_portable_kernels",
        ]
    )
    code = (tmp_path / "RegisterKernels.cpp").read_text()
    assert '"dim_order_ops::_to_dim_order_copy.out"' in code
    assert '"aten::convolution.out"' in code
    assert (tmp_path / "NativeFunctions.h").exists()
