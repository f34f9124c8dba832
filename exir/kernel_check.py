"""Checks at export time that the target runtime has a kernel for every
operator a program calls, so a missing kernel is reported with the Python
line that produced the operator instead of surfacing as a load failure on
the device.

A `KernelLibrary` is the set of operator names ("aten::add.out") a runtime
build registers; `KernelLibrary.default()` describes the default build (portable kernels,
prim ops, quantized kernels and the LLM custom operators) from the same YAML files the C++ build
reads; `KernelLibrary.portable()` the portable kernels and prim ops alone.
"""

import os
from typing import Dict, Iterable, List, Optional

import yaml

from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.source_info import source_line_of_trace

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORTABLE_FUNCTIONS_YAML = os.path.join(
    _PACKAGE_ROOT, "kernels", "portable", "functions.yaml"
)
PRIM_OPS_YAML = os.path.join(_PACKAGE_ROOT, "kernels", "prim_ops", "prim_ops.yaml")
QUANTIZED_YAML = os.path.join(_PACKAGE_ROOT, "kernels", "quantized", "quantized.yaml")
LLM_CUSTOM_OPS_YAML = os.path.join(
    _PACKAGE_ROOT, "extension", "llm", "custom_ops", "custom_ops.yaml"
)


def _entry_operator_name(entry: dict, path: str) -> str:
    """The qualified name of one kernel YAML entry: `op: add.out` (namespace
    aten implied) or `func: ns::name.overload(<args>) -> ...`."""
    if "op" in entry:
        name = entry["op"]
    elif "func" in entry:
        name = entry["func"].split("(", 1)[0]
    else:
        raise ValueError(f"{path}: entry {entry!r} has neither 'op' nor 'func'")
    name = name.strip()
    return name if "::" in name else f"aten::{name}"


def _read_yaml_list(path: str) -> list:
    with open(path) as f:
        entries = yaml.safe_load(f) or []
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a list of entries")
    return entries


class KernelLibrary:
    """The operators that a runtime build has kernels for."""

    def __init__(self, operator_names: Iterable[str]):
        self.operator_names = frozenset(operator_names)

    @classmethod
    def from_yaml(cls, *paths: str) -> "KernelLibrary":
        """Reads kernel YAML files in upstream's `functions.yaml` /
        `custom_ops.yaml` format."""
        return cls(
            _entry_operator_name(entry, path)
            for path in paths
            for entry in _read_yaml_list(path)
        )

    @classmethod
    def portable(cls) -> "KernelLibrary":
        """The default runtime: portable kernels and prim ops."""
        prim_ops = _read_yaml_list(PRIM_OPS_YAML)
        return cls(
            cls.from_yaml(PORTABLE_FUNCTIONS_YAML).operator_names | set(prim_ops)
        )

    @classmethod
    def default(cls) -> "KernelLibrary":
        """What executor_runner and the Python extension register: the
        portable kernels, prim ops, the quantized kernels and the LLM custom
        operators (`llama::`)."""
        return cls.portable() | cls.from_yaml(QUANTIZED_YAML, LLM_CUSTOM_OPS_YAML)

    def __contains__(self, operator_name: str) -> bool:
        return operator_name in self.operator_names

    def __or__(self, other: "KernelLibrary") -> "KernelLibrary":
        return KernelLibrary(self.operator_names | other.operator_names)


class MissingKernelError(ExportError, RuntimeError):
    """A program calls operators that the target runtime has no kernel for."""

    error_type = ExportErrorType.NOT_SUPPORTED


def check_kernels(sources_by_method: Dict[str, list], library: KernelLibrary) -> None:
    """Raises MissingKernelError listing every operator without a kernel in
    `library`, each with its method, graph node and source line.

    `sources_by_method` maps a method name to the emitter's
    `InstructionSource`s (operator, node, stack_trace) of its kernel calls.
    """
    problems: List[str] = []
    for method, sources in sources_by_method.items():
        for source in sources:
            if source.operator not in library:
                problems.append(
                    f"  {source.operator} (method '{method}', node "
                    f"'{source.node}') at "
                    + source_line_of_trace(source.stack_trace).replace("\n", "\n      ")
                )
    if problems:
        raise MissingKernelError(
            "The target runtime has no kernel for these operators:\n"
            + "\n".join(problems)
            + "\nAdd a kernel for each (a C++ out-variant kernel plus an entry "
            "in a kernel YAML), delegate them to a backend, or pass "
            "ExecutorchBackendConfig(kernel_library=...) describing the "
            "runtime the program is meant for (None skips this check)."
        )
