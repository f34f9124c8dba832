"""The two pipelines of the compiler, as lists of passes.

`to_edge` runs `edge_passes` on each method's exported program and
`to_executorch` runs `executorch_passes`, both through
`ExportedProgramPassManager`, which runs graph passes on every control-flow
branch and body too. User passes go in the same lists:
`to_edge(..., transform_passes=...)` appends them to the Edge pipeline and
`ExecutorchBackendConfig(passes=...)` puts them first in the ExecuTorch one.
"""

from typing import List, Sequence

from executorch.exir.capture._config import EdgeCompileConfig, ExecutorchBackendConfig
from executorch.exir.pass_manager import PassType
from executorch.exir.passes.aten_to_edge import AtenToEdgePass
from executorch.exir.passes.data_dependent_bounds import BoundDataDependentSizesPass
from executorch.exir.passes.decompositions import CoreAtenDecompositionPass
from executorch.exir.passes.default_dim_order_pass import DefaultDimOrderPass
from executorch.exir.passes.external_constants_pass import external_constants_pass
from executorch.exir.passes.fold_batch_norm import FoldBatchNormPass
from executorch.exir.passes.fold_constant_layouts import FoldConstantLayoutsPass
from executorch.exir.passes.fold_permute_chains_pass import FoldPermuteChainsPass
from executorch.exir.passes.fuse_quantized_weights import (
    FuseQuantizedWeightsPass,
    UnwrapTensorSubclassesPass,
)
from executorch.exir.passes.insert_write_back_pass import InsertWriteBackPass
from executorch.exir.passes.lower_control_flow_pass import LowerControlFlowPass
from executorch.exir.passes.memory_planning_pass import PlanMemoryPass
from executorch.exir.passes.remove_auto_functionalized_pass import (
    RemoveAutoFunctionalizedPass,
)
from executorch.exir.passes.remove_unused_constants import RemoveUnusedConstantsPass
from executorch.exir.passes.replace_view_copy_pass import ReplaceViewCopyWithViewPass
from executorch.exir.verification.quant_params import CheckQuantizationParametersPass
from executorch.exir.verification.verifier import (
    DialectPass,
    EXIREdgeDialectVerifier,
    EXIRExecutorchVerifier,
)


def edge_passes(
    config: EdgeCompileConfig, method: str, user_passes: Sequence[PassType] = ()
) -> List[PassType]:
    """ATen program -> Edge program."""
    return [
        UnwrapTensorSubclassesPass(),
        # Quantization parameters are checked before the quantize/dequantize
        # calls are fused into kernels or decomposed.
        CheckQuantizationParametersPass(method),
        *([FuseQuantizedWeightsPass()] if config.fuse_quantized_weights else []),
        CoreAtenDecompositionPass(config),
        AtenToEdgePass(skip_dim_order=config._skip_dim_order),
        DialectPass(EXIREdgeDialectVerifier),
        RemoveUnusedConstantsPass(),
        *user_passes,
    ]


def executorch_passes(config: ExecutorchBackendConfig, method: str) -> List[PassType]:
    """Edge program -> out variants with planned memory, ready to emit."""
    return [
        *config.passes,
        *_constant_folding(config),
        RemoveAutoFunctionalizedPass(),
        InsertWriteBackPass(),
        BoundDataDependentSizesPass(),
        DefaultDimOrderPass(),
        FoldPermuteChainsPass(),
        *([ReplaceViewCopyWithViewPass()] if config.remove_view_copy else []),
        config.to_out_var_pass,
        DialectPass(EXIRExecutorchVerifier),
        LowerControlFlowPass(),
        PlanMemoryPass(config.method_memory_planning_pass(method)),
        *_external_constants(config),
    ]


def _constant_folding(config: ExecutorchBackendConfig) -> List[PassType]:
    """Work the default path need not repeat per call, done once (after
    delegation: what a backend took keeps its operators). Not when
    config.fold_constants is False, nor when constants go to `.ptd` files:
    those keep their names and layouts."""
    if config.external_constants or not config.fold_constants:
        return []
    return [FoldConstantLayoutsPass(), FoldBatchNormPass()]


def _external_constants(config: ExecutorchBackendConfig) -> List[PassType]:
    """Tags constants for `.ptd` files (after planning, which marks them)."""
    tagging = config.external_constants
    if tagging is True:
        return [external_constants_pass]
    if callable(tagging):
        return [lambda gm: external_constants_pass(gm, tagging)]
    return []
