"""Load and run ExecuTorch programs from Python.

Example::

    from executorch.runtime import Runtime

    runtime = Runtime.get()
    program = runtime.load_program("model.pte")
    method = program.load_method("forward")
    outputs = method.execute([torch.randn(2, 3)])

This is the object-style API over the same C++ extension as
``executorch.extension.pybindings.portable_lib`` (the runtime core, the data
loaders, the portable kernels and the prim ops). Inputs may be torch tensors,
numpy arrays or Python scalars; tensor outputs are torch tensors, copied out
of the method's memory.
"""

import functools
from pathlib import Path
from typing import Any, BinaryIO, List, Optional, Sequence, Set, Union

from executorch.extension.pybindings import portable_lib as _portable_lib
from executorch.extension.pybindings.portable_lib import (
    MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS,
    ExecuTorchMethod,
    ExecuTorchProgram,
    MethodMeta,
    Verification,
)

__all__ = [
    "MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS",
    "BackendRegistry",
    "Method",
    "OperatorRegistry",
    "Program",
    "Runtime",
    "Verification",
]


class Method:
    """A loaded method of a program. Run it with `execute`; use it from one
    thread at a time."""

    def __init__(self, method: ExecuTorchMethod) -> None:
        self._method = method

    def execute(self, inputs: Sequence[Any]) -> Sequence[Any]:
        """Runs the method on `inputs` (one per method input, in order) and
        returns its outputs. An input that does not match the method raises
        ValueError (wrong count), TypeError (wrong kind) or RuntimeError
        (wrong dtype or shape), each naming the input and what was
        expected."""
        return self._method.call(inputs)

    def reset_mutable_buffers(self) -> None:
        """Puts the method's state (the buffers it mutates) back to the
        values it had when exported; between runs it keeps what the last
        run left, as in eager."""
        self._method.reset_mutable_buffers()

    def set_max_instructions(self, max_instructions: int) -> None:
        """Each later `execute` runs at most `max_instructions` instructions
        (0: no limit); a run that needs more, a loop that never ends, raises
        RuntimeError naming the instruction it stopped at."""
        self._method.set_max_instructions(max_instructions)

    @property
    def metadata(self) -> MethodMeta:
        """Inputs, outputs (shapes, dtypes, sizes) and planned memory of the
        method."""
        return self._method.method_meta()


class Program:
    """A loaded program. Each method is loaded on its first `load_method`
    and shared by later calls."""

    def __init__(self, program: ExecuTorchProgram) -> None:
        self._program = program
        self._method_names = set(program.method_names())
        self._methods = {}

    @property
    def method_names(self) -> Set[str]:
        """Names of the program's methods."""
        return set(self._method_names)

    def load_method(self, name: str) -> Optional[Method]:
        """The method called `name`, or None if the program has none.
        Raises RuntimeError if the method exists but cannot be loaded (a
        missing operator, a malformed plan)."""
        if name not in self._method_names:
            return None
        if name not in self._methods:
            self._methods[name] = Method(self._program.load_method(name))
        return self._methods[name]

    def metadata(self, method_name: str) -> MethodMeta:
        """Metadata of `method_name`, read without loading the method."""
        return self._program.method_meta(method_name)

    def write_etdump_result_to_file(
        self, etdump_path: str, debug_buffer_path: Optional[str] = None
    ) -> None:
        """Writes the ETDump of the loads and runs so far (the program was
        loaded with enable_etdump) and, to `debug_buffer_path`, the values
        logged into its debug buffer. Read them with
        executorch.devtools.Inspector."""
        self._program.write_etdump_result_to_file(etdump_path, debug_buffer_path)


class BackendRegistry:
    """The delegate backends linked into the runtime."""

    @property
    def registered_backend_names(self) -> List[str]:
        return _portable_lib._get_registered_backend_names()

    def is_available(self, backend_name: str) -> bool:
        """True if `backend_name` is registered and can run here."""
        return _portable_lib._is_available(backend_name)


class OperatorRegistry:
    """The operators the runtime has kernels for."""

    @property
    def operator_names(self) -> Set[str]:
        return set(_portable_lib._get_operator_names())


class Runtime:
    """Entry point: `Runtime.get()` returns the process-wide instance."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def get() -> "Runtime":
        return Runtime()

    def __init__(self) -> None:
        self.backend_registry = BackendRegistry()
        self.operator_registry = OperatorRegistry()

    def load_program(
        self,
        data: Union[bytes, bytearray, BinaryIO, Path, str],
        *,
        verification: Verification = Verification.InternalConsistency,
        enable_etdump: bool = False,
        debug_buffer_size: int = 0,
        data_path: Optional[Union[Path, str]] = None,
        max_instructions: int = 0,
    ) -> Program:
        """Loads a program from a .pte path (memory-mapped), from its bytes,
        or from a binary file object (read whole). Raises RuntimeError naming
        the file and the problem if it is not a valid program.

        With `enable_etdump`, method loads and runs are profiled (see
        Program.write_etdump_result_to_file); `debug_buffer_size` > 0 also
        logs every instruction's result into a buffer of that many bytes.
        `data_path` is the program's `.ptd` file, holding what the export
        kept outside the `.pte` (external constants, delegate weights).
        `max_instructions` > 0 bounds each method run (see
        Method.set_max_instructions); a program from an untrusted source
        should get MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS, so that a loop
        that never ends raises instead of hanging."""
        tracing = dict(
            program_verification=verification,
            enable_etdump=enable_etdump,
            debug_buffer_size=debug_buffer_size,
            data_path=None if data_path is None else str(data_path),
            max_instructions=max_instructions,
        )
        if isinstance(data, (str, Path)):
            program = _portable_lib._load_program(str(data), **tracing)
        elif isinstance(data, (bytes, bytearray, memoryview)):
            program = _portable_lib._load_program_from_buffer(data, **tracing)
        elif hasattr(data, "read"):
            program = _portable_lib._load_program_from_buffer(data.read(), **tracing)
        else:
            raise TypeError(
                "load_program expects a path, bytes or a binary file object; "
                f"got {type(data).__name__}"
            )
        return Program(program)
