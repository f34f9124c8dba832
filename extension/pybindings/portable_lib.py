"""Run ExecuTorch programs from Python on the optimized kernels (the portable
ones for the operators they do not cover, or when they are not built).

The module-style API of ExecuTorch's ``portable_lib``::

    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch,
        _load_for_executorch_from_buffer,
    )

    module = _load_for_executorch("model.pte")
    outputs = module.forward((torch.randn(2, 3),))
    outputs = module.run_method("forward", (torch.randn(2, 3),))
    meta = module.method_meta("forward")  # num_inputs(), input_tensor_meta(i)

Inputs may be torch tensors, numpy arrays or Python scalars (bool, int,
float); tensor outputs are torch tensors (numpy arrays when torch is not
installed). Outputs are always copies, independent of the method's memory.

The C++ extension ``_portable_lib`` knows nothing about torch: it exchanges
numpy arrays. This module converts between torch and numpy, importing torch
only when a torch tensor is seen or a tensor output is returned. Dtypes numpy
lacks (bfloat16, the float8 kinds) cross as ``TypedArray``: the raw bits in
an unsigned integer array of the same width, tagged with the ExecuTorch
dtype.

Errors raise exceptions that name the method, the input, what was expected
and what was given, and the runtime's error code.
"""

import importlib
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Union

from executorch.extension.pybindings import _portable_lib as _C
from executorch.extension.pybindings._portable_lib import (  # noqa: F401
    MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS,
    _get_kernel_library,
    _get_operator_names,
    _get_registered_backend_names,
    _is_available,
    MethodMeta,
    TensorInfo,
    TypedArray,
    Verification,
)

# The process-wide thread pool that the optimized kernels share (absent from
# a build without pthreadpool), under upstream's names:
# _unsafe_reset_threadpool(n) while no method is executing, and
# _threadpool_get_thread_count().
if hasattr(_C, "_unsafe_reset_threadpool"):
    _unsafe_reset_threadpool = _C._unsafe_reset_threadpool
    _threadpool_get_thread_count = _C._threadpool_get_thread_count

# ExecuTorch ScalarType codes of the torch dtypes numpy has no type for,
# with the unsigned torch dtype of the same width that carries their bits.
_BITS_DTYPES = {
    "bfloat16": (15, "uint16"),
    "float8_e5m2": (23, "uint8"),
    "float8_e4m3fn": (24, "uint8"),
    "float8_e5m2fnuz": (25, "uint8"),
    "float8_e4m3fnuz": (26, "uint8"),
}
_BITS_DTYPE_NAMES = {code: name for name, (code, _) in _BITS_DTYPES.items()}


def _torch():
    """The torch module, imported on first use; None without torch."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


def _to_runtime(value: Any) -> Any:
    """Converts one input for the extension: torch tensors become numpy
    arrays (or TypedArrays); anything else is passed on unchanged."""
    # A torch tensor can only come from a torch that is already imported.
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return value
    # numpy() refuses tensors with lazy conjugate or negative views.
    tensor = value.detach().cpu().resolve_conj().resolve_neg().contiguous()
    name = str(tensor.dtype).removeprefix("torch.")
    if name in _BITS_DTYPES:
        code, bits = _BITS_DTYPES[name]
        return TypedArray(tensor.view(getattr(torch, bits)).numpy(), code)
    return tensor.numpy()


def _from_runtime(value: Any) -> Any:
    """Converts one output of the extension: arrays become torch tensors
    when torch is available; lists are converted element by element."""
    if isinstance(value, list):
        return [_from_runtime(v) for v in value]
    is_typed = isinstance(value, TypedArray)
    if not is_typed and not hasattr(value, "__array_interface__"):
        return value
    torch = _torch()
    # Dtypes torch lacks too (quantized, bit-packed) stay TypedArrays.
    if torch is None or (is_typed and value.dtype not in _BITS_DTYPE_NAMES):
        return value
    if is_typed:
        dtype = getattr(torch, _BITS_DTYPE_NAMES[value.dtype])
        return torch.from_numpy(value.array).view(dtype)
    return torch.from_numpy(value)


class ExecuTorchMethod:
    """One loaded method of a program, with the memory it runs in.

    A method may be run many times; each run sees new inputs. Use it from one
    thread at a time.
    """

    def __init__(self, method: "_C.Method") -> None:
        self._method = method

    def set_inputs(self, inputs: Sequence[Any]) -> None:
        self._method.set_inputs([_to_runtime(v) for v in inputs])

    def execute(self) -> None:
        self._method.execute()

    def get_outputs(self, clone_outputs: bool = True) -> List[Any]:
        """Outputs of the last execution. They are always copies, whatever
        `clone_outputs` says."""
        return [_from_runtime(v) for v in self._method.get_outputs()]

    def call(self, inputs: Sequence[Any] = (), clone_outputs: bool = True) -> List[Any]:
        """Sets `inputs`, executes and returns the outputs."""
        outputs = self._method.call([_to_runtime(v) for v in inputs])
        return [_from_runtime(v) for v in outputs]

    __call__ = call

    def method_meta(self) -> MethodMeta:
        return self._method.method_meta()

    def load_bundled_input(self, bundle: "BundledModule", testset_idx: int) -> None:
        """Sets the inputs of test case `testset_idx` of a bundled
        program."""
        self._method.load_bundled_input(bundle._bundled, testset_idx)

    def verify_bundled_outputs(
        self, bundle: "BundledModule", testset_idx: int, rtol: float, atol: float
    ) -> None:
        """Checks the last execution's outputs against test case
        `testset_idx`; raises, naming the worst element, on a mismatch."""
        self._method.verify_bundled_outputs(bundle._bundled, testset_idx, rtol, atol)

    def step(self) -> bool:
        """Runs the next instruction (after `set_inputs`); False once the
        method has run to its end, and the next step starts over. For
        debugging: `get_value` reads what each instruction wrote."""
        return self._method.step()

    def reset_execution(self) -> None:
        """Makes the next `step` start from the first instruction."""
        self._method.reset_execution()

    def reset_mutable_buffers(self) -> None:
        """Puts the buffers the method mutates (its state: a KV cache, a
        counter) back to the initial values the program stores; they
        otherwise keep what each run leaves, as module buffers do in
        eager."""
        self._method.reset_mutable_buffers()

    def num_values(self) -> int:
        """The size of the method's value table."""
        return self._method.num_values()

    def set_max_instructions(self, max_instructions: int) -> None:
        """Each later run executes at most `max_instructions` instructions
        (0: no limit); one that needs more, a loop that never ends, raises
        RuntimeError naming the instruction it stopped at. A program from an
        untrusted source should get MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS."""
        self._method.set_max_instructions(max_instructions)

    def max_instructions(self) -> int:
        return self._method.max_instructions()

    def get_value(self, index: int) -> Any:
        """A copy of entry `index` of the method's value table (a tensor,
        scalar, list or None), as it is now."""
        return _from_runtime(self._method.get_value(index))


class ExecuTorchProgram:
    """A loaded program: its methods' names and metadata, and a way to load
    each method."""

    def __init__(self, program: "_C.Program") -> None:
        self._program = program

    def num_methods(self) -> int:
        return self._program.num_methods()

    def get_method_name(self, method_index: int) -> str:
        return self._program.get_method_name(method_index)

    def method_names(self) -> List[str]:
        return self._program.method_names()

    def method_meta(self, method_name: str) -> MethodMeta:
        return self._program.method_meta(method_name)

    def load_method(self, method_name: str) -> ExecuTorchMethod:
        return ExecuTorchMethod(self._program.load_method(method_name))

    def has_etdump(self) -> bool:
        """Whether the program was loaded with enable_etdump (or a debug
        buffer)."""
        return self._program.has_etdump()

    def write_etdump_result_to_file(
        self, path: str, debug_buffer_path: Optional[str] = None
    ) -> None:
        """Writes the ETDump of every load and run so far to `path`, and
        the values logged into the debug buffer to `debug_buffer_path`
        (read both with executorch.devtools.Inspector)."""
        self._program.write_etdump_result_to_file(
            str(path), None if debug_buffer_path is None else str(debug_buffer_path)
        )


class ExecuTorchModule:
    """A program whose methods load on first use and stay loaded."""

    def __init__(self, program: ExecuTorchProgram) -> None:
        self._program = program
        self._methods: Dict[str, ExecuTorchMethod] = {}

    def _method(self, method_name: str) -> ExecuTorchMethod:
        method = self._methods.get(method_name)
        if method is None:
            method = self._program.load_method(method_name)
            self._methods[method_name] = method
        return method

    def run_method(
        self, method_name: str, inputs: Sequence[Any] = (), clone_outputs: bool = True
    ) -> List[Any]:
        """Runs `method_name` on `inputs` and returns its outputs."""
        return self._method(method_name).call(inputs)

    def forward(self, inputs: Sequence[Any], clone_outputs: bool = True) -> List[Any]:
        return self.run_method("forward", inputs)

    def __call__(self, inputs: Any, clone_outputs: bool = True) -> List[Any]:
        if not isinstance(inputs, (list, tuple)):
            inputs = (inputs,)
        return self.forward(inputs)

    def method_meta(self, method_name: str) -> MethodMeta:
        return self._program.method_meta(method_name)

    def method_names(self) -> List[str]:
        return self._program.method_names()

    def reset_mutable_buffers(self, method_name: str = "forward") -> None:
        """See ExecuTorchMethod.reset_mutable_buffers."""
        self._method(method_name).reset_mutable_buffers()

    def has_etdump(self) -> bool:
        return self._program.has_etdump()

    def write_etdump_result_to_file(
        self, path: str, debug_buffer_path: Optional[str] = None
    ) -> None:
        """See ExecuTorchProgram.write_etdump_result_to_file."""
        self._program.write_etdump_result_to_file(path, debug_buffer_path)

    def load_bundled_input(
        self, bundle: "BundledModule", method_name: str, testset_idx: int
    ) -> None:
        """Sets `method_name`'s inputs to test case `testset_idx` of
        `bundle`; run it with `plan_execute`."""
        self._method(method_name).load_bundled_input(bundle, testset_idx)

    def plan_execute(self, method_name: str, clone_outputs: bool = True) -> List[Any]:
        """Runs `method_name` on the inputs already set; returns its
        outputs."""
        method = self._method(method_name)
        method.execute()
        return method.get_outputs()

    def verify_result_with_bundled_expected_output(
        self,
        bundle: "BundledModule",
        method_name: str,
        testset_idx: int,
        rtol: float = 1e-5,
        atol: float = 1e-8,
    ) -> List[Any]:
        """Checks the outputs of the last `plan_execute` of `method_name`
        against test case `testset_idx`; raises RuntimeError naming the worst
        element when they differ. Returns the outputs."""
        method = self._method(method_name)
        method.verify_bundled_outputs(bundle, testset_idx, rtol, atol)
        return method.get_outputs()


class BundledModule:
    """A bundled program (.bpte): a program and test cases for its
    methods."""

    def __init__(self, bundled: "_C.BundledProgram") -> None:
        self._bundled = bundled
        self._module: Optional[ExecuTorchModule] = None

    def _get_module(self) -> ExecuTorchModule:
        if self._module is None:
            self._module = _load_for_executorch_from_bundled_program(self)
        return self._module

    def verify_result_with_bundled_expected_output(
        self,
        method_name: str,
        testset_idx: int,
        rtol: float = 1e-5,
        atol: float = 1e-8,
    ) -> List[Any]:
        """Runs test case `testset_idx` of `method_name` and checks its
        outputs; raises RuntimeError naming the worst element when they
        differ. Returns the outputs."""
        module = self._get_module()
        module.load_bundled_input(self, method_name, testset_idx)
        module.plan_execute(method_name)
        return module.verify_result_with_bundled_expected_output(
            self, method_name, testset_idx, rtol, atol
        )


def _load_program(
    path: str,
    enable_etdump: bool = False,
    debug_buffer_size: int = 0,
    program_verification: Verification = Verification.Minimal,
    data_path: Optional[str] = None,
    share_memory_arenas: bool = False,
    max_instructions: int = 0,
) -> ExecuTorchProgram:
    """Loads the .pte file at `path` (memory-mapped). With `enable_etdump`
    every method load and run is profiled (write_etdump_result_to_file);
    `debug_buffer_size` > 0 also logs every instruction's result into a
    buffer of that many bytes (values that do not fit are skipped with a
    warning). With `share_memory_arenas` all methods run in the same planned
    buffers 1 and 2, so methods planned with
    MemoryPlanningPass(share_mutable_buffers=True) share their mutable
    buffers (prefill and decode sharing a KV cache); run one method at a
    time. `data_path` is the program's `.ptd` file (its external constants
    or delegate weights). `max_instructions` > 0 is the instruction budget
    of each method's run (see ExecuTorchMethod.set_max_instructions): use
    MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS for a program from an untrusted
    source."""
    return ExecuTorchProgram(
        _C._load_program(
            str(path),
            program_verification,
            enable_etdump,
            debug_buffer_size,
            share_memory_arenas,
            None if data_path is None else str(data_path),
            max_instructions=max_instructions,
        )
    )


def _load_program_from_buffer(
    buffer: bytes,
    enable_etdump: bool = False,
    debug_buffer_size: int = 0,
    program_verification: Verification = Verification.Minimal,
    data_path: Optional[Union[str, bytes]] = None,
    share_memory_arenas: bool = False,
    max_instructions: int = 0,
) -> ExecuTorchProgram:
    """Loads a program from the bytes of a .pte file (copied); `data_path`
    is a `.ptd` file, or its bytes; see _load_program for the other
    arguments."""
    data = data_path
    if isinstance(data, (str, os.PathLike)):
        with open(data, "rb") as f:
            data = f.read()
    return ExecuTorchProgram(
        _C._load_program_from_buffer(
            buffer,
            program_verification,
            enable_etdump,
            debug_buffer_size,
            share_memory_arenas,
            data,
            max_instructions=max_instructions,
        )
    )


def _load_for_executorch(
    program_path: str,
    data_path: Optional[str] = None,
    enable_etdump: bool = False,
    debug_buffer_size: int = 0,
    program_verification: Verification = Verification.InternalConsistency,
    share_memory_arenas: bool = False,
    max_instructions: int = 0,
) -> ExecuTorchModule:
    """Loads the .pte file at `program_path` as a module (see _load_program
    for `share_memory_arenas` and `max_instructions`)."""
    return ExecuTorchModule(
        _load_program(
            program_path,
            enable_etdump,
            debug_buffer_size,
            program_verification,
            data_path,
            share_memory_arenas,
            max_instructions,
        )
    )


def _load_for_executorch_from_buffer(
    buffer: bytes,
    data_map_buffer: Optional[bytes] = None,
    enable_etdump: bool = False,
    debug_buffer_size: int = 0,
    program_verification: Verification = Verification.InternalConsistency,
    share_memory_arenas: bool = False,
    max_instructions: int = 0,
) -> ExecuTorchModule:
    """Loads a module from the bytes of a .pte file (copied), with the
    bytes of its `.ptd` file as `data_map_buffer` (see _load_program for
    the other arguments)."""
    return ExecuTorchModule(
        _load_program_from_buffer(
            buffer,
            enable_etdump,
            debug_buffer_size,
            program_verification,
            data_map_buffer,
            share_memory_arenas,
            max_instructions,
        )
    )


def _load_bundled_program_from_buffer(
    buffer: bytes, non_const_pool_size: int = 0
) -> BundledModule:
    """Loads a bundled program (the bytes of a .bpte, copied and checked)."""
    return BundledModule(_C._load_bundled_program_from_buffer(buffer))


def _load_for_executorch_from_bundled_program(
    module: BundledModule,
    data_map_buffer: Optional[bytes] = None,
    enable_etdump: bool = False,
    debug_buffer_size: int = 0,
) -> ExecuTorchModule:
    """Loads the program inside a bundled program as a module; see
    _load_program for the other arguments."""
    if data_map_buffer is not None:
        raise NotImplementedError(
            "external data (.ptd) with a bundled program is not supported"
        )
    return ExecuTorchModule(
        ExecuTorchProgram(
            _C._load_program_from_bundled_program(
                module._bundled,
                Verification.Minimal,
                enable_etdump,
                debug_buffer_size,
            )
        )
    )
