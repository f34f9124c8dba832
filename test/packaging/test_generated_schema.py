"""The FlatBuffer schemas' Python modules are checked in, inside the package:
`import executorch.exir` works from a fresh clone before any C++ build, and
the checked-in modules are what flatc makes from today's schemas."""

import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_generated_modules_match_the_schemas():
    if shutil.which("flatc") is None:
        pytest.skip("flatc is not installed")
    result = subprocess.run(
        [sys.executable, REPO / "scripts/generate_flatbuffer_python.py", "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def fresh_clone(destination: Path) -> Path:
    """Copies the files a clone of the current tree would have (tracked or
    not ignored: no build directory, no in-place extension) into
    `destination/executorch`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    root = destination / "executorch"
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    return root


# Exports with the portable flow and through the XNNPACK partitioner, which
# serialize with the .pte and XNNPACK blob schemas respectively.
EXPORT = textwrap.dedent("""
    import os, sys
    import torch
    import executorch
    from executorch.exir import to_edge, to_edge_transform_and_lower
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )

    assert executorch.__file__.startswith(sys.argv[1]), executorch.__file__
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    exported = torch.export.export(model, (torch.randn(2, 4),))
    portable = to_edge(exported).to_executorch().buffer
    lowered = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    delegated = lowered.to_executorch().buffer
    assert portable[4:8] == b"ET12" and b"XnnpackBackend" in delegated
    names = [n for n in sys.modules if n.endswith("_portable_lib")]
    print("extension modules imported:", names)
    """)


def test_exir_imports_and_exports_from_a_fresh_clone(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = fresh_clone(tmp_path)
    assert not (clone / "build").exists()
    assert not list(clone.glob("extension/pybindings/_portable_lib*"))
    # -S: no .pth files, so neither the editable install of this checkout nor
    # anything else but the clone provides `executorch`; torch and the other
    # dependencies come from site-packages, added by hand.
    setup_path = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
        f"sys.path += {site.getsitepackages()!r}\n"
    )
    env = dict(os.environ, EXECUTORCH_BUILD_DIR=str(tmp_path / "no-build"))
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            setup_path + EXPORT,
            str(clone),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "extension modules imported: []" in result.stdout
