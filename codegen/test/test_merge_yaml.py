"""merge_yaml: an optimized library's YAML over the portable one."""

import pytest
import yaml

from executorch.codegen.tools import merge_yaml


def _entry(op, kernel):
    return {"op": op, "kernels": [{"arg_meta": None, "kernel_name": kernel}]}


def test_primary_entries_replace_fallback_ones_by_operator_name():
    primary = [
        _entry("add.out", "opt::add_out"),
        {"func": "aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
         "kernels": [{"arg_meta": None, "kernel_name": "opt::mm_out"}]},
    ]
    fallback = [
        _entry("aten::add.out", "portable::add_out"),
        _entry("mm.out", "portable::mm_out"),
        _entry("relu.out", "portable::relu_out"),
    ]
    merged = merge_yaml.merge(primary, fallback)
    kernels = [e["kernels"][0]["kernel_name"] for e in merged]
    assert kernels == ["opt::add_out", "opt::mm_out", "portable::relu_out"]


def test_script_writes_merged_yaml_and_leaves_identical_output_alone(tmp_path):
    primary = tmp_path / "opt.yaml"
    fallback = tmp_path / "portable.yaml"
    primary.write_text(yaml.safe_dump([_entry("relu.out", "opt::relu_out")]))
    fallback.write_text(
        yaml.safe_dump([_entry("relu.out", "p::relu_out"), _entry("abs.out", "p::abs_out")])
    )
    out_dir = tmp_path / "out"
    args = ["--functions_yaml", str(primary), "--fallback_yaml", str(fallback),
            "--output_dir", str(out_dir)]
    merge_yaml.main(args)
    merged = out_dir / "merged.yaml"
    entries = yaml.safe_load(merged.read_text())
    assert [e["op"] for e in entries] == ["relu.out", "abs.out"]
    assert entries[0]["kernels"][0]["kernel_name"] == "opt::relu_out"
    first_write = merged.stat().st_mtime_ns
    merge_yaml.main(args)
    assert merged.stat().st_mtime_ns == first_write


def test_entry_without_a_name_is_an_error():
    with pytest.raises(SystemExit, match="without 'op' or 'func'"):
        merge_yaml.merge([{"kernels": []}], [])
