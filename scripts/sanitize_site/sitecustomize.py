"""Imported at startup by every Python that scripts/sanitize_test.sh runs
(this directory is on their PYTHONPATH): pytest, and the interpreters the
tests start themselves (test_hostile_programs loads its mutants in a child).
Each then imports this checkout's extension modules from the sanitizer
build (EXECUTORCH_SANITIZE_EXTENSION_ROOT) instead of the main build's
uninstrumented ones next to the sources. Other packages, and an ExecuTorch
installed elsewhere (upstream's, in its own environment), are left alone."""

import importlib.machinery
import os
import sys

_EXTENSIONS = ("_portable_lib", "_llm_runner")
# scripts/sanitize_site/sitecustomize.py -> the checkout.
_REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))


class _SanitizerBuildExtensions:
    """Finds the sanitizer build's extension modules for this checkout."""

    def __init__(self, extension_root):
        self.extension_root = extension_root

    def find_spec(self, name, path=None, target=None):
        package, _, module = name.rpartition(".")
        if module not in _EXTENSIONS or not path:
            return None
        in_checkout = (
            os.path.realpath(p).startswith(_REPO_ROOT + os.sep) for p in path
        )
        if not any(in_checkout):
            return None
        directory = os.path.join(self.extension_root, *package.split(".")[1:])
        spec = importlib.machinery.PathFinder.find_spec(name, [directory])
        if spec is None:
            raise ImportError(f"{name} was not built in {directory}")
        return spec


_root = os.environ.get("EXECUTORCH_SANITIZE_EXTENSION_ROOT")
if _root:
    sys.meta_path.insert(0, _SanitizerBuildExtensions(_root))
