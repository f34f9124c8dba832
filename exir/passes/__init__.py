"""Graph passes of the EXIR pipeline."""

from executorch.exir.passes.memory_planning_pass import MemoryPlanningPass
from executorch.exir.passes.spec_prop_pass import SpecPropPass
from executorch.exir.passes.sym_shape_eval_pass import (
    ConstraintBasedSymShapeEvalPass,
    HintBasedSymShapeEvalPass,
)
from executorch.exir.passes.to_out_var_pass import ToOutVarPass

__all__ = [
    "ConstraintBasedSymShapeEvalPass",
    "HintBasedSymShapeEvalPass",
    "MemoryPlanningPass",
    "SpecPropPass",
    "ToOutVarPass",
]
