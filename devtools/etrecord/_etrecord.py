"""ETRecord: what the compiler knew about a program, saved for the
developer tools.

An ETRecord is a zip file in upstream ExecuTorch's layout: an identifier
entry "ETRECORD_V0"; the Edge program of each method under
"edge_dialect_exported_program/<method>" (torch.export's serialization with
Edge targets and debug handles, exir/serde/serialize.py; the state dict,
constants and example inputs under the same name plus "_state_dict",
"_constants", "_example_inputs"); optionally the ATen program under
"exported_program" and extra programs under their own names; and the JSON
maps "debug_handle_map", "delegate_map" and
"instruction_id_to_num_outs_map" of the executorch program, which relate
each runtime instruction (an ETDump event's instruction_id) to the Edge
nodes it runs. "reference_outputs" and "representative_inputs" (torch.save
of lists) hold a bundled program's test data.

Delegated Edge programs are saved with their delegates inlined
(_inline_delegates.py), so every delegated node keeps its source line and
debug handle and the program runs eagerly.
"""

import io
import json
import os
import zipfile
from enum import Enum
from typing import Any, BinaryIO, Dict, IO, List, Optional, Union

import torch
from torch.export import ExportedProgram

from executorch.devtools.etrecord._inline_delegates import inline_delegates
from executorch.exir import EdgeProgramManager, ExecutorchProgramManager
from executorch.exir.error import ExportError, ExportErrorType
from executorch.exir.serde.serialize import (
    SerializedArtifact,
    deserialize,
    serialize,
)

ProgramInput = Any
ProgramOutput = torch.Tensor


class ETRecordReservedFileNames(str, Enum):
    ETRECORD_IDENTIFIER = "ETRECORD_V0"
    EXPORTED_PROGRAM = "exported_program"
    EXPORT_GRAPH_ID = "export_graph_id"
    EDGE_DIALECT_EXPORTED_PROGRAM = "edge_dialect_exported_program"
    ET_DIALECT_GRAPH_MODULE = "et_dialect_graph_module"
    DEBUG_HANDLE_MAP_NAME = "debug_handle_map"
    DELEGATE_MAP_NAME = "delegate_map"
    INSTRUCTION_ID_TO_NUM_OUTS_MAP_NAME = "instruction_id_to_num_outs_map"
    REFERENCE_OUTPUTS = "reference_outputs"
    REPRESENTATIVE_INPUTS = "representative_inputs"


_RESERVED = [name.value for name in ETRecordReservedFileNames]
_ARTIFACT_SUFFIXES = ("_state_dict", "_constants", "_example_inputs")


class ETRecordError(ExportError, ValueError):
    """An ETRecord that cannot be read or written; says which file and
    entry."""

    error_type = ExportErrorType.INVALID_INPUT_TYPE


class ETRecord:
    """The contents of an ETRecord. Build one with `generate_etrecord` (or
    the add_* methods) and read one with `parse_etrecord`.

    Attributes:
        edge_dialect_program: the Edge program (one method), or a dict of
            method name to Edge program.
        exported_program: the ATen program, when recorded.
        graph_map: extra programs by "<name>/<method>".
        _debug_handle_map, _delegate_map, _instruction_id_to_num_outs_map:
            per method, by instruction index (string keys after loading).
        _reference_outputs: per method, the expected outputs of each test
            case; _representative_inputs: the inputs of the first one.
    """

    def __init__(
        self,
        exported_program: Optional[ExportedProgram] = None,
        export_graph_id: Optional[int] = None,
        edge_dialect_program: Optional[
            Union[ExportedProgram, Dict[str, ExportedProgram]]
        ] = None,
        graph_map: Optional[Dict[str, ExportedProgram]] = None,
        _debug_handle_map: Optional[Dict[str, Dict]] = None,
        _delegate_map: Optional[Dict[str, Dict]] = None,
        _instruction_id_to_num_outs_map: Optional[Dict[str, Dict]] = None,
        _reference_outputs: Optional[Dict[str, List[List[ProgramOutput]]]] = None,
        _representative_inputs: Optional[List[ProgramInput]] = None,
    ):
        self.exported_program = exported_program
        self.export_graph_id = export_graph_id
        self.edge_dialect_program = edge_dialect_program
        self.graph_map = graph_map
        self._debug_handle_map = _debug_handle_map
        self._delegate_map = _delegate_map
        self._instruction_id_to_num_outs_map = _instruction_id_to_num_outs_map
        self._reference_outputs = _reference_outputs
        self._representative_inputs = _representative_inputs

    def edge_programs(self) -> Dict[str, ExportedProgram]:
        """The Edge program of each method."""
        if isinstance(self.edge_dialect_program, ExportedProgram):
            return {"forward": self.edge_dialect_program}
        return dict(self.edge_dialect_program or {})

    # ------------------------------------------------------------------
    # Building

    def add_exported_program(
        self, exported_program: Union[ExportedProgram, Dict[str, ExportedProgram], None]
    ) -> None:
        if isinstance(exported_program, dict):
            exported_program = exported_program.get("forward")
        if exported_program is not None:
            self.exported_program = exported_program
            self.export_graph_id = id(exported_program.graph)

    def add_edge_dialect_program(
        self, edge_dialect_program: EdgeProgramManager
    ) -> None:
        if not isinstance(edge_dialect_program, EdgeProgramManager):
            raise ETRecordError(
                "edge_dialect_program must be an EdgeProgramManager (what "
                f"to_edge returns), got {type(edge_dialect_program).__name__}"
            )
        programs = {
            name: inline_delegates(edge_dialect_program.exported_program(name))
            for name in sorted(edge_dialect_program.methods)
        }
        self.edge_dialect_program = (
            programs["forward"] if list(programs) == ["forward"] else programs
        )

    def add_executorch_program(self, executorch_program) -> None:
        """Takes the debug maps of an ExecutorchProgramManager, or of a
        BundledProgram's program together with its test data."""
        from executorch.devtools.bundled_program.core import BundledProgram

        if isinstance(executorch_program, BundledProgram):
            self.update_reference_outputs(executorch_program)
            self.update_representative_inputs(executorch_program)
            executorch_program = executorch_program.executorch_program
        if not isinstance(executorch_program, ExecutorchProgramManager):
            raise ETRecordError(
                "executorch_program must be an ExecutorchProgramManager (what "
                "to_executorch returns) or a BundledProgram, got "
                f"{type(executorch_program).__name__}"
            )
        self._debug_handle_map = executorch_program.debug_handle_map
        self._delegate_map = executorch_program.delegate_map
        self._instruction_id_to_num_outs_map = (
            executorch_program.instruction_id_to_num_outs_map
        )

    def add_extra_export_modules(self, modules: Dict[str, Any]) -> None:
        self.graph_map = dict(self.graph_map or {})
        for name, module in modules.items():
            if any(reserved in name for reserved in _RESERVED):
                raise ETRecordError(f"{name!r} is a reserved ETRecord entry name")
            if isinstance(module, EdgeProgramManager):
                for method in module.methods:
                    self.graph_map[f"{name}/{method}"] = inline_delegates(
                        module.exported_program(method)
                    )
            elif isinstance(module, ExportedProgram):
                self.graph_map[f"{name}/forward"] = module
            else:
                raise ETRecordError(
                    f"extra module {name!r}: unsupported type {type(module).__name__}"
                )

    def update_representative_inputs(self, inputs) -> None:
        """The inputs the runtime ran with (a list of values, or a
        BundledProgram: the first test case of "forward")."""
        from executorch.devtools.bundled_program.core import BundledProgram

        if isinstance(inputs, BundledProgram):
            suite = next(
                (s for s in inputs.method_test_suites if s.method_name == "forward"),
                None,
            )
            inputs = list(suite.test_cases[0].inputs) if suite else None
        self._representative_inputs = None if inputs is None else list(inputs)

    def update_reference_outputs(self, outputs) -> None:
        """Expected outputs per method and test case (a dict), of "forward"
        (a list), or a BundledProgram's."""
        from executorch.devtools.bundled_program.core import BundledProgram

        if isinstance(outputs, BundledProgram):
            outputs = {
                suite.method_name: [list(c.expected_outputs) for c in suite.test_cases]
                for suite in outputs.method_test_suites
            }
        elif isinstance(outputs, list):
            outputs = {"forward": outputs}
        self._reference_outputs = outputs

    # ------------------------------------------------------------------
    # Saving

    def save(self, path: Union[str, os.PathLike, BinaryIO, IO[bytes]]) -> None:
        if not self.edge_dialect_program or self._debug_handle_map is None:
            raise ETRecordError(
                "an ETRecord needs the Edge program and the executorch program "
                "(add_edge_dialect_program and add_executorch_program)"
            )
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(ETRecordReservedFileNames.ETRECORD_IDENTIFIER.value, "")
            if self.exported_program is not None:
                _write_program(
                    archive,
                    ETRecordReservedFileNames.EXPORTED_PROGRAM.value,
                    self.exported_program,
                )
            for method, program in self.edge_programs().items():
                _write_program(
                    archive,
                    f"{ETRecordReservedFileNames.EDGE_DIALECT_EXPORTED_PROGRAM.value}/{method}",
                    program,
                )
            for name, program in (self.graph_map or {}).items():
                _write_program(archive, name, program)
            maps = {
                ETRecordReservedFileNames.DEBUG_HANDLE_MAP_NAME: self._debug_handle_map,
                ETRecordReservedFileNames.DELEGATE_MAP_NAME: self._delegate_map,
                ETRecordReservedFileNames.INSTRUCTION_ID_TO_NUM_OUTS_MAP_NAME: (
                    self._instruction_id_to_num_outs_map
                ),
                ETRecordReservedFileNames.EXPORT_GRAPH_ID: self.export_graph_id,
            }
            for name, value in maps.items():
                if value is not None:
                    archive.writestr(name.value, json.dumps(value))
            tensors = {
                ETRecordReservedFileNames.REFERENCE_OUTPUTS: self._reference_outputs,
                ETRecordReservedFileNames.REPRESENTATIVE_INPUTS: (
                    self._representative_inputs
                ),
            }
            for name, value in tensors.items():
                if value is not None:
                    buffer = io.BytesIO()
                    torch.save(value, buffer)
                    archive.writestr(name.value, buffer.getvalue())


def _write_program(archive: zipfile.ZipFile, name: str, program: ExportedProgram):
    artifact = serialize(program)
    archive.writestr(name, artifact.exported_program)
    archive.writestr(f"{name}_state_dict", artifact.state_dict)
    archive.writestr(f"{name}_constants", artifact.constants)
    archive.writestr(f"{name}_example_inputs", artifact.example_inputs)


def generate_etrecord(
    et_record: Union[str, os.PathLike, BinaryIO, IO[bytes]],
    edge_dialect_program: EdgeProgramManager,
    executorch_program,
    exported_program: Optional[
        Union[ExportedProgram, Dict[str, ExportedProgram]]
    ] = None,
    extra_recorded_export_modules: Optional[Dict[str, Any]] = None,
) -> None:
    """Saves an ETRecord to `et_record`: the Edge program (`to_edge` or
    `to_edge_transform_and_lower`'s result; delegates are inlined), the
    debug maps of `executorch_program` (its `to_executorch()` result, or a
    BundledProgram, whose test data is saved too), and optionally the ATen
    program and extra programs."""
    etrecord = ETRecord()
    etrecord.add_exported_program(exported_program)
    etrecord.add_edge_dialect_program(edge_dialect_program)
    etrecord.add_executorch_program(executorch_program)
    if extra_recorded_export_modules:
        etrecord.add_extra_export_modules(extra_recorded_export_modules)
    etrecord.save(et_record)


# ----------------------------------------------------------------------
# Loading


def _read_program(archive: zipfile.ZipFile, name: str, source: str) -> ExportedProgram:
    try:
        artifact = SerializedArtifact(
            archive.read(name),
            *(archive.read(name + suffix) for suffix in _ARTIFACT_SUFFIXES),
        )
    except KeyError as error:
        raise ETRecordError(f"{source}: entry {error.args[0]} is missing") from None
    try:
        return deserialize(artifact)
    except Exception as error:
        raise ETRecordError(
            f"{source}: entry {name!r} is not a serialized program "
            f"({type(error).__name__}: {error})"
        ) from None


def _read_json(archive: zipfile.ZipFile, name: str, source: str):
    try:
        return json.loads(archive.read(name))
    except ValueError as error:
        raise ETRecordError(f"{source}: entry {name!r} is not JSON ({error})") from None


def _read_tensors(archive: zipfile.ZipFile, name: str, source: str):
    try:
        return torch.load(io.BytesIO(archive.read(name)), weights_only=True)
    except Exception as error:
        raise ETRecordError(
            f"{source}: entry {name!r} cannot be loaded ({error})"
        ) from None


def parse_etrecord(etrecord_path: Union[str, os.PathLike]) -> ETRecord:
    """Reads an ETRecord (ours or upstream's). A file that is not one, or
    whose entries are damaged, raises ETRecordError naming the file and the
    entry."""
    source = os.fspath(etrecord_path)
    try:
        archive = zipfile.ZipFile(etrecord_path, "r")
    except (zipfile.BadZipFile, OSError) as error:
        raise ETRecordError(
            f"{source}: not an ETRecord (not a zip file: {error})"
        ) from None
    with archive:
        names = archive.namelist()
        if ETRecordReservedFileNames.ETRECORD_IDENTIFIER.value not in names:
            raise ETRecordError(
                f"{source}: not an ETRecord (no "
                f"{ETRecordReservedFileNames.ETRECORD_IDENTIFIER.value} entry)"
            )
        try:
            bad = archive.testzip()
        except Exception as error:
            bad = f"({error})"
        if bad is not None:
            raise ETRecordError(f"{source}: entry {bad!r} is damaged")
        record = ETRecord(graph_map={})
        edge_prefix = ETRecordReservedFileNames.EDGE_DIALECT_EXPORTED_PROGRAM.value
        edge: Dict[str, ExportedProgram] = {}
        for name in names:
            if name.endswith(_ARTIFACT_SUFFIXES) or name == _RESERVED[0]:
                continue
            if name == ETRecordReservedFileNames.DEBUG_HANDLE_MAP_NAME.value:
                record._debug_handle_map = _read_json(archive, name, source)
            elif name == ETRecordReservedFileNames.DELEGATE_MAP_NAME.value:
                record._delegate_map = _read_json(archive, name, source)
            elif (
                name
                == ETRecordReservedFileNames.INSTRUCTION_ID_TO_NUM_OUTS_MAP_NAME.value
            ):
                record._instruction_id_to_num_outs_map = _read_json(
                    archive, name, source
                )
            elif name == ETRecordReservedFileNames.EXPORT_GRAPH_ID.value:
                record.export_graph_id = _read_json(archive, name, source)
            elif name == ETRecordReservedFileNames.REFERENCE_OUTPUTS.value:
                record._reference_outputs = _read_tensors(archive, name, source)
            elif name == ETRecordReservedFileNames.REPRESENTATIVE_INPUTS.value:
                record._representative_inputs = _read_tensors(archive, name, source)
            elif name == ETRecordReservedFileNames.EXPORTED_PROGRAM.value:
                record.exported_program = _read_program(archive, name, source)
            elif name == edge_prefix:
                edge["forward"] = _read_program(archive, name, source)
            elif name.startswith(edge_prefix + "/"):
                edge[name[len(edge_prefix) + 1 :]] = _read_program(
                    archive, name, source
                )
            else:
                record.graph_map[name] = _read_program(archive, name, source)
    if not edge:
        raise ETRecordError(
            f"{source}: entry {edge_prefix!r} (the Edge program) is missing"
        )
    if record._debug_handle_map is None:
        raise ETRecordError(
            f"{source}: entry "
            f"{ETRecordReservedFileNames.DEBUG_HANDLE_MAP_NAME.value!r} is missing"
        )
    record.edge_dialect_program = edge["forward"] if list(edge) == ["forward"] else edge
    return record
