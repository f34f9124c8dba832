"""The ahead-of-time half of the XNNPACK backend: `to_backend` finds it by
its class name, the backend id the runtime registers ("XnnpackBackend")."""

from typing import List

from torch.export import ExportedProgram

from executorch.backends.xnnpack.lowering import lower_to_xnnpack
from executorch.exir._serialize._named_data_store import NamedDataStore
from executorch.exir.backend import BackendDetails, CompileSpec, PreprocessResult
from executorch.exir.passes.fold_permute_chains_pass import FoldPermuteChainsPass


class XnnpackBackend(BackendDetails):
    @staticmethod
    def preprocess(
        edge_program: ExportedProgram, compile_specs: List[CompileSpec]
    ) -> PreprocessResult:
        # Weights go to the program's named data, keyed by their content, as
        # upstream stores them: identical weights are stored once, and
        # upstream's runtime keeps them loaded for as long as the delegate
        # (XNNPACK reads some constants, e.g. elementwise operands, in place).
        # Compile specs (e.g. "num_threads") are read by the runtime backend.
        store = NamedDataStore()
        # One transpose where the graph permutes a permute (three per layer of
        # nn.MultiheadAttention's export); exact, so done on the partition
        # in place.
        FoldPermuteChainsPass()(edge_program.graph_module)
        blob = lower_to_xnnpack(edge_program, store)
        return PreprocessResult(
            processed_bytes=blob, data_store_output=store.get_named_data_store_output()
        )
