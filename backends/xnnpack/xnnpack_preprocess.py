"""The ahead-of-time half of the XNNPACK backend: `to_backend` finds it by
its class name, the backend id the runtime registers ("XnnpackBackend")."""

from typing import List

from torch.export import ExportedProgram

from executorch.backends.xnnpack.lowering import lower_to_xnnpack
from executorch.exir.backend import BackendDetails, CompileSpec, PreprocessResult


class XnnpackBackend(BackendDetails):
    @staticmethod
    def preprocess(
        edge_program: ExportedProgram, compile_specs: List[CompileSpec]
    ) -> PreprocessResult:
        # Compile specs (e.g. "num_threads") are read by the runtime backend.
        return PreprocessResult(processed_bytes=lower_to_xnnpack(edge_program))
