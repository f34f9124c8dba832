"""How symbolic sizes become the sizes that memory is planned at.

Upstream export scripts choose one with
`ExecutorchBackendConfig(sym_shape_eval_pass=...)`. This SDK plans every
dynamic tensor at the upper bound that the export's range constraints give
it (`exir.tensor.upper_bound`), so a program runs at every size within its
bounds; the config accepts these passes to say so, and rejects others.
"""

import warnings


class ConstraintBasedSymShapeEvalPass:
    """Plans symbolic sizes at the upper bounds of the export's range
    constraints (`torch.export.Dim(max=...)`): how this SDK always plans."""


class HintBasedSymShapeEvalPass(ConstraintBasedSymShapeEvalPass):
    """Upstream's older choice: plan symbolic sizes at the example inputs'
    sizes, so that larger sizes fail at run time. Here it plans at the
    upper bounds like ConstraintBasedSymShapeEvalPass, which holds the
    example sizes too, and says so."""

    def __init__(self):
        warnings.warn(
            "HintBasedSymShapeEvalPass: this SDK plans dynamic tensors at the "
            "upper bounds of their torch.export.Dim ranges "
            "(ConstraintBasedSymShapeEvalPass), not at the example sizes",
            stacklevel=2,
        )
