"""The package's version (`__version__`, the single source the wheel's
metadata reads) and the git commit it was built from (`git_version`).

A wheel records its commit at build time in `_build_info.py` (written by the
CMake build); a source checkout asks git, on first use of `git_version`
only, so importing this module never starts a process.
"""

import subprocess
from pathlib import Path
from typing import Optional

__all__ = ["__version__", "git_version", "upstream_version"]

__version__ = "0.1.0"

# The upstream ExecuTorch release whose `.pte` format, Python API and C++ API
# this version is compatible with (its programs run here and ours there).
upstream_version = "1.5.1"


def _git_commit() -> Optional[str]:
    """The commit the package was built from, or None if nothing says."""
    try:
        from ._build_info import GIT_COMMIT

        return GIT_COMMIT or None
    except ImportError:
        pass
    checkout = Path(__file__).resolve().parent
    if not (checkout / ".git").exists():
        return None
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def __getattr__(name: str):
    if name == "git_version":
        global git_version
        git_version = _git_commit()
        return git_version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
