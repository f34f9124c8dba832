"""BackendDetails: the ahead-of-time half of a backend."""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from torch.export import ExportedProgram

from executorch.exir._serialize._named_data_store import NamedDataStoreOutput
from executorch.exir.backend.compile_spec_schema import CompileSpec


@dataclass
class PreprocessResult:
    """What `preprocess` returns: the blob the runtime backend executes,
    and data it looks up by key at init (`NamedDataStore`'s output: stored
    in the program's named data, or in `.ptd` files by external tag)."""

    processed_bytes: bytes = b""
    debug_handle_map: Optional[Dict[int, Tuple[int, ...]]] = None
    data_store_output: Optional[NamedDataStoreOutput] = None


class BackendDetails(ABC):
    """Subclass this, named after the backend id (e.g. `XnnpackBackend`), to
    make a backend available to `to_backend`: the class is found by its
    name."""

    @staticmethod
    @abstractmethod
    def preprocess(
        edge_program: ExportedProgram, compile_specs: List[CompileSpec]
    ) -> PreprocessResult:
        """Compiles an Edge program (one delegated partition) into the bytes
        the runtime backend of the same id executes."""


def find_backend(backend_id: str) -> type:
    """The BackendDetails subclass named `backend_id` (imported somewhere)."""
    pending = list(BackendDetails.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__name__ == backend_id:
            return cls
        pending.extend(cls.__subclasses__())
    raise NotImplementedError(
        f"No backend '{backend_id}': define (and import) a subclass of "
        "executorch.exir.backend.backend_details.BackendDetails with that name"
    )
