"""From ETDump records to the Inspector's events.

Each RunData of an ETDump is one run of a block (usually one execution of a
method). Runs of the same block that recorded the same sequence of events
are merged: every profiling event becomes one `Event` whose `perf_data`
holds its duration in each run. Values logged while an instruction (or a
delegate event) ran are attached to its profiling events as `debug_data`;
values marked as method outputs become the block's `run_output`.
"""

import dataclasses
from typing import Dict, List, Optional, Tuple

import torch

from executorch.devtools.etdump import schema_flatcc as etdump
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.tensor import dtype_of_scalar_type_code


class DebugBufferError(ExportError, ValueError):
    """A logged value that the debug buffer does not hold."""

    error_type = ExportErrorType.INVALID_INPUT_TYPE


# What identifies an instruction (or a delegate event inside one) in a run:
# chain, instruction, delegate ids.
InstructionKey = Tuple[int, Optional[int], Optional[int], Optional[str]]


@dataclasses.dataclass(frozen=True)
class EventSignature:
    name: str
    chain_index: int
    instruction_id: Optional[int]
    delegate_id: Optional[int]
    delegate_id_str: Optional[str]

    def key(self) -> InstructionKey:
        return (
            self.chain_index,
            self.instruction_id,
            self.delegate_id,
            self.delegate_id_str,
        )


@dataclasses.dataclass
class RecordedEvent:
    """One profiling event merged over runs, before ETRecord lookups."""

    signature: EventSignature
    durations: List[int] = dataclasses.field(default_factory=list)
    start_times: List[int] = dataclasses.field(default_factory=list)
    metadata: List[bytes] = dataclasses.field(default_factory=list)
    debug_data: List = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RecordedBlock:
    name: str
    bundled_input_index: Optional[int]
    events: List[RecordedEvent]
    run_output: List


def _optional(value, unset):
    return None if value == unset or value == "" else value


def _chain(index: int) -> int:
    # Debug events store the chain unsigned: an unset chain reads as 2**64-1.
    return index - 2**64 if index >= 2**63 else index


def _key(event) -> InstructionKey:
    return (
        _chain(event.chain_index),
        _optional(event.instruction_id, -1),
        _optional(event.delegate_debug_id_int, -1),
        _optional(event.delegate_debug_id_str, None),
    )


def _duration(start: int, end: int) -> int:
    # A 32-bit tick counter may wrap around once within an event.
    if end < start and start < 2**32:
        return end + 2**32 - start
    return end - start


def inflate_value(value: etdump.Value, buffer: Optional[bytes], where: str):
    """The Python value of a logged ETDump value: tensors are read from the
    debug buffer (None without one)."""
    kind = value.val
    if kind == etdump.ValueType.TENSOR.value:
        return _tensor(value.tensor, buffer, where)
    if kind == etdump.ValueType.TENSOR_LIST.value:
        return [_tensor(t, buffer, where) for t in value.tensor_list.tensors]
    if kind == etdump.ValueType.INT.value:
        return value.int_value.int_val
    if kind == etdump.ValueType.BOOL.value:
        return value.bool_value.bool_val
    if kind == etdump.ValueType.DOUBLE.value:
        return value.double_value.double_val
    if kind == etdump.ValueType.FLOAT.value:
        return value.float_value.float_val
    return None


def _tensor(tensor: etdump.Tensor, buffer: Optional[bytes], where: str):
    if buffer is None:
        return None
    dtype = dtype_of_scalar_type_code(tensor.scalar_type)
    sizes, strides = list(tensor.sizes), list(tensor.strides)
    if len(strides) != len(sizes):
        raise DebugBufferError(
            f"{where}: tensor with {len(sizes)} sizes and {len(strides)} strides"
        )
    span = 0 if 0 in sizes else 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    nbytes = span * torch.empty((), dtype=dtype).element_size()
    offset = tensor.offset or 0
    if offset < 0 or offset + nbytes > len(buffer):
        raise DebugBufferError(
            f"{where}: tensor of {nbytes} bytes at offset {offset} lies outside "
            f"the {len(buffer)}-byte debug buffer"
        )
    if span == 0:
        return torch.empty(sizes, dtype=dtype)
    flat = torch.frombuffer(bytearray(buffer[offset : offset + nbytes]), dtype=dtype)
    return flat.as_strided(sizes, strides).clone()


def _run_events(run: etdump.RunData, buffer, where):
    """The run's profiling signatures in order, each with its timing, the
    values logged per instruction, and the method outputs."""
    profile = []
    values: Dict[InstructionKey, List] = {}
    outputs = []
    for index, event in enumerate(run.events or []):
        if event.profile_event is not None:
            p = event.profile_event
            signature = EventSignature(
                p.name or "",
                _chain(p.chain_index),
                _optional(p.instruction_id, -1),
                _optional(p.delegate_debug_id_int, -1),
                _optional(p.delegate_debug_id_str, None),
            )
            profile.append((signature, p))
        elif event.debug_event is not None:
            d = event.debug_event
            value = inflate_value(d.debug_entry, buffer, f"{where} event {index}")
            if d.debug_entry.output is not None and d.debug_entry.output.bool_val:
                outputs.append(value)
            else:
                values.setdefault(_key(d), []).append(value)
    return profile, values, outputs


def _value_only_events(values, profiled_keys):
    """Instructions that logged values but have no profiling event (a
    profiling level that times nothing per instruction) still get an event,
    named after nothing."""
    for key in values:
        if key not in profiled_keys:
            yield EventSignature("", *key)


def recorded_blocks(
    dump: etdump.ETDumpFlatCC, buffer: Optional[bytes], source: str = "ETDump"
) -> List[RecordedBlock]:
    groups: Dict[Tuple, RecordedBlock] = {}
    for run_index, run in enumerate(dump.run_data):
        where = f"{source}: run_data[{run_index}]"
        profile, values, outputs = _run_events(run, buffer, where)
        profiled_keys = {s.key() for s, _ in profile}
        extra = list(_value_only_events(values, profiled_keys))
        signatures = tuple(s for s, _ in profile) + tuple(extra)
        bundled = _optional(run.bundled_input_index, -1)
        group_key = (run.name, bundled, signatures)
        block = groups.get(group_key)
        if block is None:
            block = RecordedBlock(
                run.name,
                bundled,
                [RecordedEvent(s) for s in signatures],
                outputs,
            )
            for event in block.events:
                event.debug_data = values.get(event.signature.key(), [])
            groups[group_key] = block
        for event, (_, p) in zip(block.events, profile):
            event.durations.append(_duration(p.start_time, p.end_time))
            event.start_times.append(p.start_time)
            event.metadata.append(p.delegate_debug_metadata or b"")
    return list(groups.values())
