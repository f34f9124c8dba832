"""The package's metadata as its build backend reports it, its version,
and its console commands."""

import email
import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import executorch
from executorch import version

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def metadata(tmp_path_factory):
    """The wheel's METADATA and entry points from pyproject.toml's build
    backend (its metadata hook: no C++ build)."""
    with open(REPO / "pyproject.toml", "rb") as f:
        backend = tomllib.load(f)["build-system"]["build-backend"]
    out = tmp_path_factory.mktemp("metadata")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; from {backend} import "
            "prepare_metadata_for_build_wheel as p; print(p(sys.argv[1]))",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    dist_info = out / result.stdout.strip().splitlines()[-1]
    return (
        email.message_from_string((dist_info / "METADATA").read_text()),
        (dist_info / "entry_points.txt").read_text(),
    )


def test_version_is_the_wheels_version(metadata):
    meta, _ = metadata
    assert meta["Name"] == "executorch"
    assert meta["Version"] == version.__version__ == executorch.__version__
    assert "torch==2.13.0" in meta.get_all("Requires-Dist")
    assert meta["Requires-Python"]


def test_license_is_declared_and_shipped(metadata):
    meta, _ = metadata
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert "BSD 3-Clause License" in (REPO / "LICENSE").read_text()


def test_git_version_is_the_checkouts_commit():
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    assert version.git_version == head.stdout.strip()
    from executorch.version import git_version

    assert git_version == head.stdout.strip()


def console_scripts(entry_points: str):
    section, scripts = None, {}
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif line and section == "[console_scripts]":
            name, target = (part.strip() for part in line.split("=", 1))
            scripts[name] = target
    return scripts


def test_console_commands_have_help(metadata):
    _, entry_points = metadata
    scripts = console_scripts(entry_points)
    assert {
        "executor_runner",
        "executorch-devtools-report",
        "executorch-export",
        "executorch-find-divergence",
        "executorch-gen-oplist",
        "executorch-op-sweep",
    } <= scripts.keys()
    for name, target in scripts.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), name
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys; from {module} import {function} as f; "
                "sys.exit(f(['--help']))",
            ],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, f"{name}: {result.stderr[-2000:]}"
        assert "usage" in (result.stdout + result.stderr).lower(), name
