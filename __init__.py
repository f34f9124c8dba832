"""On-device inference SDK for PyTorch, compatible with ExecuTorch.

`executorch.exir` compiles an `nn.Module` into a `.pte` program;
`executorch.runtime` and `executorch.extension.pybindings.portable_lib` run
programs through the C++ runtime.
"""

from .version import __version__  # noqa: F401
