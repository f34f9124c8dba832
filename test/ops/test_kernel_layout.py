"""The portable kernels' layout stays what kernels/portable/README.md says:
its family table lists exactly the cpu/op_*.cpp files, and every gtest file
op_<family>_test.cpp is named after a kernel file."""

import re
from pathlib import Path

PORTABLE = Path(__file__).resolve().parents[2] / "kernels" / "portable"


def test_readme_table_lists_every_kernel_file():
    readme = (PORTABLE / "README.md").read_text()
    listed = set(re.findall(r"^\| `(op_\w+\.cpp)` \|", readme, re.M))
    on_disk = {p.name for p in (PORTABLE / "cpu").glob("op_*.cpp")}
    assert listed == on_disk, (
        f"README lists {sorted(listed - on_disk)} that do not exist and misses "
        f"{sorted(on_disk - listed)}"
    )


def test_gtest_files_are_named_after_kernel_files():
    for test_file in (PORTABLE / "test").glob("op_*_test.cpp"):
        kernel = test_file.name.replace("_test.cpp", ".cpp")
        assert (PORTABLE / "cpu" / kernel).exists(), (
            f"{test_file.name} has no kernel file cpu/{kernel}"
        )
