"""Data that backends look up by key at run time (upstream ExecuTorch's
NamedDataStore API): delegate weights stored once in the `.pte`'s named
data segments, or in an external `.ptd` file (`external_tag`).

Identical bytes are stored once whatever their keys, so a weight shared by
two delegates, or equal weights in two layers, take the space of one.
"""

import dataclasses
import hashlib
from typing import Dict, List, Optional

from executorch.exir.tensor_layout import TensorLayout


@dataclasses.dataclass
class DataEntry:
    """One stored buffer and the alignment its readers need."""

    buffer: bytes
    alignment: int


@dataclasses.dataclass
class NamedDataStoreOutput:
    """What a NamedDataStore holds: unique buffers, and for each key the
    index of its buffer, either in the `.pte` (`pte_data`) or in the
    external file named by its tag (`external_data[tag]`); for keys whose
    data is a tensor, its layout (written to `.ptd` files)."""

    buffers: List[DataEntry] = dataclasses.field(default_factory=list)
    pte_data: Dict[str, int] = dataclasses.field(default_factory=dict)
    external_data: Dict[str, Dict[str, int]] = dataclasses.field(
        default_factory=dict
    )
    tensor_layouts: Dict[str, TensorLayout] = dataclasses.field(
        default_factory=dict
    )


class NamedDataStore:
    def __init__(self) -> None:
        self._output = NamedDataStoreOutput()
        self._buffer_index: Dict[bytes, int] = {}

    def add_named_data(
        self,
        key: str,
        data: bytes,
        alignment: Optional[int] = 1,
        external_tag: Optional[str] = None,
        tensor_layout: Optional[TensorLayout] = None,
    ) -> None:
        """Stores `data` under `key` in the `.pte` (or, with `external_tag`,
        in that external file, with `tensor_layout` when the data is a
        tensor). Adding a key again with the same bytes is a no-op; with
        other bytes it raises ValueError."""
        alignment = alignment or 1
        if alignment & (alignment - 1):
            raise ValueError(
                f"named data '{key}': alignment {alignment} is not a power of 2"
            )
        data = bytes(data)
        keys = (
            self._output.pte_data
            if external_tag is None
            else self._output.external_data.setdefault(external_tag, {})
        )
        digest = hashlib.sha256(data).digest()
        index = self._buffer_index.get(digest)
        if index is None:
            index = len(self._output.buffers)
            self._buffer_index[digest] = index
            self._output.buffers.append(DataEntry(data, alignment))
        entry = self._output.buffers[index]
        entry.alignment = max(entry.alignment, alignment)
        if keys.get(key, index) != index:
            where = "the .pte" if external_tag is None else f"'{external_tag}'"
            raise ValueError(
                f"named data '{key}' in {where} is already stored with other bytes"
            )
        keys[key] = index
        if tensor_layout is not None:
            self._output.tensor_layouts[key] = tensor_layout

    def merge_named_data_store(self, other: NamedDataStoreOutput) -> None:
        """Adds every key of `other` (e.g. one delegate's) to this store."""
        for key, index in other.pte_data.items():
            entry = other.buffers[index]
            self.add_named_data(key, entry.buffer, entry.alignment)
        for tag, keys in other.external_data.items():
            for key, index in keys.items():
                entry = other.buffers[index]
                self.add_named_data(
                    key,
                    entry.buffer,
                    entry.alignment,
                    tag,
                    other.tensor_layouts.get(key),
                )

    def get_named_data_store_output(self) -> NamedDataStoreOutput:
        return self._output
