"""Tests for operator selection (selected-operators YAML) and the
generator's selective outputs. Needs PyYAML only."""

import os

import pytest
from executorch.codegen import gen, selective
from executorch.codegen.schema import load_schema_file

HERE = os.path.dirname(__file__)
SCHEMAS = os.path.join(HERE, "..", "aten_schemas.txt")
PORTABLE_YAML = os.path.join(HERE, "..", "..", "kernels", "portable", "functions.yaml")

# The shape of upstream's selected_operators.yaml.
UPSTREAM_YAML = """
build_features: []
custom_classes: []
et_kernel_metadata:
  aten::add.out:
    - v1/6;0,1|6;0,1|6;0,1
    - v1/3;0|3;0|3;0
  aten::mm.out:
    - default
include_all_non_op_selectives: false
include_all_operators: false
kernel_metadata: {}
operators:
  aten::add.out:
    debug_info: [model.pte]
    include_all_overloads: false
    is_root_operator: true
    is_used_for_training: false
  aten::mm.out:
    include_all_overloads: false
    is_root_operator: true
  aten::sum:
    include_all_overloads: true
    is_root_operator: true
"""


def test_reads_upstream_yaml_with_dtypes_per_operator():
    s = selective.from_yaml_text(UPSTREAM_YAML)
    assert s.dtypes["aten::add.out"] == {"Float", "Int"}
    assert s.dtypes["aten::mm.out"] is None  # "default": every dtype
    assert s.is_selected("aten::add.out") and s.is_selected("mm.out")
    # include_all_overloads selects every overload of the base name.
    assert s.is_selected("aten::sum.IntList_out")
    assert not s.is_selected("aten::sub.out")
    assert s.debug_info["aten::add.out"] == ["model.pte"]


def test_build_dtypes_is_the_union_and_needs_every_op_restricted():
    s = selective.from_yaml_text(
        "operators: [aten::add.out, aten::mul.out]\n"
        "et_kernel_metadata:\n"
        "  aten::add.out: ['v1/5;0|5;0|5;0']\n"
        "  aten::mul.out: ['v1/4;0|4;0|11;0']\n"
    )
    ops = ["aten::add.out", "aten::mul.out"]
    # Half computes in Float, so Float is compiled too.
    assert s.build_dtypes(ops) == {"Half", "Float", "Long", "Bool"}
    assert s.build_dtypes(["aten::add.out"]) == {"Half", "Float"}
    s.add("aten::sub.out", None, "list")
    assert s.build_dtypes(ops + ["aten::sub.out"]) is None


def test_yaml_round_trip_keeps_operators_and_metadata():
    s = selective.from_yaml_text(UPSTREAM_YAML)
    again = selective.from_yaml_text(selective.to_yaml_text(s))
    assert again.dtypes == s.dtypes
    assert again.kernel_metadata == s.kernel_metadata
    assert again.all_overloads == {"aten::sum"}


def test_op_list_and_merge():
    s = selective.from_op_list(["add.out", " aten::mm.out ", ""])
    assert set(s.dtypes) == {"aten::add.out", "aten::mm.out"}
    other = selective.from_yaml_text(
        "operators: [aten::add.out]\n"
        "et_kernel_metadata: {aten::add.out: ['v1/6;0|6;0|6;0']}\n"
    )
    other.merge(s)
    assert other.dtypes["aten::add.out"] is None  # the list wants all dtypes


@pytest.mark.parametrize(
    "entry, message",
    [("v2/6;0", "does not start with 'v1/'"), ("v1/99;0", "unknown dtype '99'")],
)
def test_bad_metadata_names_operator_and_entry(entry, message):
    with pytest.raises(selective.SelectionError, match=message) as e:
        selective.from_yaml_text(
            f"operators: [aten::add.out]\net_kernel_metadata: {{aten::add.out: ['{entry}']}}\n",
            source="ops.yaml",
        )
    assert "ops.yaml: aten::add.out" in str(e.value)


def test_kernel_metadata_entry_format():
    assert selective.kernel_metadata_entry([(6, (0, 1)), (4, (0,))]) == "v1/6;0,1|4;0"
    assert selective.kernel_metadata_entry([]) == "default"


def test_dtype_header_lists_selected_dtypes():
    header = gen.gen_selected_dtypes_header({"Float", "Long"})
    assert "case ::executorch::aten::ScalarType::Float:" in header
    assert "case ::executorch::aten::ScalarType::Long:" in header
    assert "ScalarType::Int:" not in header
    assert "return true;" in gen.gen_selected_dtypes_header(None)


def test_generator_registers_only_operators_the_yaml_selects(tmp_path, capsys):
    ops_yaml = tmp_path / "selected_operators.yaml"
    # Operators without a kernel in functions.yaml (prim ops, custom ops)
    # belong to other libraries and are skipped.
    ops_yaml.write_text(
        "operators: [aten::add.out, aten::relu.out, executorch_prim::add.Scalar]\n"
        "et_kernel_metadata: {aten::add.out: ['v1/6;0|6;0|6;0'], "
        "aten::relu.out: ['v1/6;0|6;0']}\n"
    )
    gen.main(
        [
            "--functions-yaml", PORTABLE_YAML,
            "--schemas", SCHEMAS,
            "--output-dir", str(tmp_path / "out"),
            "--register-function", "ns::register_selected",
            "--selected-ops-yaml", str(ops_yaml),
            "--dtype-header",
        ]
    )  # fmt: skip
    registration = (tmp_path / "out" / "RegisterKernels.cpp").read_text()
    assert registration.count('Kernel("') == 2
    assert 'Kernel("aten::add.out"' in registration
    assert 'Kernel("aten::relu.out"' in registration
    header = (tmp_path / "out" / "et_selected_dtypes.h").read_text()
    assert "ScalarType::Float:" in header and "ScalarType::Long:" not in header
    assert (
        "left to other libraries: executorch_prim::add.Scalar"
        in capsys.readouterr().err
    )


SPECIALIZED = """
- op: add.out
  type_alias:
    T0: [Float, Double]
    T1: [Long]
  dim_order_alias:
    D0: [[0, 1], [1, 0]]
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out
    - arg_meta:
        self: [T0, D0]
        other: [T1, D0]
        out: [T0, D0]
      kernel_name: custom::add_mixed_out
"""


def test_arg_meta_expands_aliases_into_kernel_keys():
    entries = gen.parse_functions_yaml(SPECIALIZED, load_schema_file(SCHEMAS))
    fallback, specialized = entries
    assert fallback.keys == () and fallback.wrapper_name == "wrap_aten_add_out"
    assert specialized.wrapper_name == "wrap_aten_add_out_1"
    # self, other, out, then the returned out; 2 dtypes x 2 dim orders.
    assert specialized.keys == (
        "v1/6;0,1|4;0,1|6;0,1|6;0,1",
        "v1/6;1,0|4;1,0|6;1,0|6;1,0",
        "v1/7;0,1|4;0,1|7;0,1|7;0,1",
        "v1/7;1,0|4;1,0|7;1,0|7;1,0",
    )
    code = gen.gen_registration(entries, "ns::f", "NativeFunctions.h")
    assert (
        'Kernel("aten::add.out", "v1/7;1,0|4;1,0|7;1,0|7;1,0", wrap_aten_add_out_1)'
        in code
    )
    assert "kKernels, size_t{5})" in code
    assert "custom::native::add_mixed_out(" in code


@pytest.mark.parametrize(
    "arg_meta, message",
    [
        ("{self: [T0, D0], out: [T0, D0]}", r"missing: \['other'\]"),
        ("{self: [T0, D0], other: [T0, D0], out: [T9, D0]}", "undefined alias"),
        ("{self: [T0, D0], other: [T0, D0], out: [T0, D0], alpha: [T0, D0]}", "alpha"),
    ],
)
def test_bad_arg_meta_names_operator_and_problem(arg_meta, message):
    text = SPECIALIZED.replace(
        """self: [T0, D0]
        other: [T1, D0]
        out: [T0, D0]""",
        arg_meta,
    ).replace("    - arg_meta:\n        {", "    - arg_meta: {")
    with pytest.raises(gen.GenError, match=message) as e:
        gen.parse_functions_yaml(text, load_schema_file(SCHEMAS), source="k.yaml")
    assert "k.yaml: aten::add.out kernel 1" in str(e.value)
