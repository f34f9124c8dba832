"""The `executor_runner` console command: runs the C++ `executor_runner`
that ships in the installed package (`bin/`), or, in a source checkout, the
one the CMake build made. Arguments pass through unchanged (`--help` lists
them)."""

import os
import sys
from pathlib import Path
from typing import List, Optional

_PACKAGE = Path(__file__).resolve().parent.parent


def runner_path() -> Path:
    """The `executor_runner` binary: the installed one first, then the
    developer build's (`$EXECUTORCH_BUILD_DIR`, default `build/`)."""
    candidates = [_PACKAGE / "bin" / "executor_runner"]
    build_dir = Path(os.environ.get("EXECUTORCH_BUILD_DIR", _PACKAGE / "build"))
    candidates.append(build_dir / "examples" / "executor_runner" / "executor_runner")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "executor_runner is not built; looked for "
        + ", ".join(str(c) for c in candidates)
        + " (install the package with pip, or run scripts/setup.sh)"
    )


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        runner = runner_path()
    except FileNotFoundError as e:
        print(f"executor_runner: {e}", file=sys.stderr)
        return 1
    os.execv(runner, [str(runner)] + args)


if __name__ == "__main__":
    sys.exit(main())
