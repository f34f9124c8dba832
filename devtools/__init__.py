"""Developer tools: numerical debugging of programs against eager PyTorch.

`find_first_divergence(edge_program, inputs)` runs a program on the runtime
one instruction at a time and reports the first operator whose result
departs from eager, with the source line that produced it;
`python -m executorch.devtools.find_divergence` does the same from the
command line.
"""

from executorch.devtools.numeric_debugger import (
    DivergenceReport,
    OpComparison,
    eager_node_values,
    find_first_divergence,
)

__all__ = [
    "DivergenceReport",
    "OpComparison",
    "eager_node_values",
    "find_first_divergence",
]
