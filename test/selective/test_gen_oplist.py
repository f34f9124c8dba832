"""gen_oplist on real programs: the operators and tensor dtypes read from a
.pte (without torch), merged with lists and YAMLs, and malformed .pte files
rejected with the field named."""

import pytest
import torch
import yaml

from executorch.codegen import selective
from executorch.codegen.tools import gen_oplist, pte_operators
from executorch.exir import to_edge
from executorch.exir._serialize import deserialize_pte_binary, serialize_pte_binary


class MixedDtypes(torch.nn.Module):
    def forward(self, x, n):
        return x * 2, n + 1


@pytest.fixture(scope="module")
def pte(tmp_path_factory):
    inputs = (torch.randn(2, 3), torch.ones(4, dtype=torch.int32))
    path = tmp_path_factory.mktemp("gen_oplist") / "mixed.pte"
    to_edge(torch.export.export(MixedDtypes(), inputs)).to_executorch().save(str(path))
    return path


def test_reads_operators_with_dtypes_and_dim_orders(pte):
    calls = pte_operators.read_operators_file(str(pte)).calls
    assert set(calls) == {"aten::mul.Scalar_out", "aten::add.Scalar_out"}
    # Float (6) for mul's input, out and returned out; Int (3) for add's.
    assert calls["aten::mul.Scalar_out"] == [((6, (0, 1)),) * 3]
    assert calls["aten::add.Scalar_out"] == [((3, (0,)),) * 3]


def test_writes_upstream_yaml_merging_model_list_and_yaml(pte, tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("operators: {aten::mm.out: {include_all_overloads: false}}\n")
    out = tmp_path / "selected" / "selected_operators.yaml"
    selection = gen_oplist.gen_oplist(
        str(out),
        model_file_paths=[str(pte)],
        ops_schema_yaml_paths=[str(extra)],
        root_ops="aten::sub.out",
    )
    data = yaml.safe_load(out.read_text())
    assert set(data["operators"]) == {
        "aten::mul.Scalar_out",
        "aten::add.Scalar_out",
        "aten::mm.out",
        "aten::sub.out",
    }
    assert data["et_kernel_metadata"]["aten::add.Scalar_out"] == ["v1/3;0|3;0|3;0"]
    assert data["operators"]["aten::mul.Scalar_out"]["debug_info"] == [str(pte)]
    assert not data["include_all_operators"]
    # Read back, the model's operators keep their dtypes.
    again = selective.load_yaml(str(out))
    assert again.dtypes["aten::mul.Scalar_out"] == {"Float"}
    assert again.dtypes["aten::sub.out"] is None
    assert selection.build_dtypes(["aten::mul.Scalar_out", "aten::add.Scalar_out"]) == {
        "Float",
        "Int",
    }


def test_include_all_operators_and_nothing_selected(tmp_path):
    out = tmp_path / "all.yaml"
    gen_oplist.gen_oplist(str(out), include_all_operators=True)
    assert selective.load_yaml(str(out)).is_selected("aten::anything.out")
    with pytest.raises(selective.SelectionError, match="no operators selected"):
        gen_oplist.gen_oplist(str(tmp_path / "none.yaml"))


def test_malformed_pte_names_the_field(pte):
    pte_file = deserialize_pte_binary(pte.read_bytes())
    call = pte_file.program.executionPlan[0].chains[0].instructions[0].instrArgs
    call.opIndex = 7
    data = serialize_pte_binary(pte_file.program, pte_file.constant_data or [b""])
    with pytest.raises(
        pte_operators.PteError, match=r"instructions\[0\]: op_index 7 out of range"
    ):
        pte_operators.read_operators(data, source="bad.pte")
    with pytest.raises(pte_operators.PteError, match="not a .pte file"):
        pte_operators.read_operators(b"\0" * 64)


def test_command_line_fails_with_a_message(tmp_path):
    with pytest.raises(SystemExit, match="gen_oplist: .*not a .pte file"):
        bad = tmp_path / "bad.pte"
        bad.write_bytes(b"\0" * 64)
        gen_oplist.main(
            ["--output_path", str(tmp_path / "o.yaml"), "--model_file_path", str(bad)]
        )
