"""A partition lowered to a backend, and the operator that calls it.

In a graph, a delegated partition is

    %lowered_module_0 = get_attr[lowered_module_0]
    %call = call_function[executorch_call_delegate](%lowered_module_0, %x, %w)
    %out = call_function[getitem](%call, 0)

which the emitter turns into a DelegateCall of the module's blob.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch
from torch._C import DispatchKey
from torch._ops import HigherOrderOperator
from torch.export import ExportedProgram

from executorch.exir._serialize._named_data_store import NamedDataStoreOutput

if TYPE_CHECKING:
    from executorch.exir.backend.compile_spec_schema import CompileSpec


class LoweredBackendModule(torch.nn.Module):
    """The output of a backend's `preprocess` for one Edge program.

    Attributes:
        backend_id: the backend that runs `processed_bytes`.
        processed_bytes: the blob stored in the program.
        compile_specs: stored with the blob for the runtime backend.
        original_module: the Edge program the blob implements (used to run
            the delegate eagerly and to trace shapes).
        meta: "debug_handle_map", when the backend's preprocess gave one:
            the backend's own event ids to the debug handles of the nodes
            each covers (for the ETRecord's delegate map).
        named_data_store_output: data the blob refers to by key (stored in
            the program's named data or in `.ptd` files), or None.
    """

    def __init__(
        self,
        edge_program: ExportedProgram,
        backend_id: str,
        processed_bytes: bytes,
        compile_specs: List["CompileSpec"],
        named_data_store_output: Optional[NamedDataStoreOutput] = None,
    ):
        super().__init__()
        self._original_exported_program = edge_program
        self._backend_id = backend_id
        self._processed_bytes = processed_bytes
        self._compile_specs = list(compile_specs)
        self.meta: Dict[str, Any] = {}
        self._named_data_store_output = named_data_store_output

    @property
    def backend_id(self) -> str:
        return self._backend_id

    @property
    def processed_bytes(self) -> bytes:
        return self._processed_bytes

    @property
    def compile_specs(self) -> List["CompileSpec"]:
        return self._compile_specs

    @property
    def named_data_store_output(self) -> Optional[NamedDataStoreOutput]:
        return self._named_data_store_output

    @property
    def original_module(self) -> ExportedProgram:
        return self._original_exported_program

    def forward(self, *args):
        return executorch_call_delegate(self, *args)


class _ExecutorchCallDelegate(HigherOrderOperator):
    """Calls a LoweredBackendModule on tensors; returns a tuple of its
    outputs."""

    def __init__(self):
        super().__init__("executorch_call_delegate")

    def __call__(self, lowered_module, *args):
        return super().__call__(lowered_module, *args)


executorch_call_delegate = _ExecutorchCallDelegate()


def _run_original(lowered_module: LoweredBackendModule, *args):
    # Eagerly, a delegate computes what the program it was lowered from does.
    return tuple(lowered_module.original_module.module()(*args))


executorch_call_delegate.py_impl(DispatchKey.CompositeExplicitAutograd)(_run_original)
executorch_call_delegate.py_impl(DispatchKey.Autograd)(_run_original)
