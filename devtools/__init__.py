"""Developer tools: profiling and debugging programs.

- `Inspector`: the runtime's ETDump (per-operator timings, logged values)
  joined with the compiler's ETRecord (`generate_etrecord`): tables, totals
  per module, numeric gaps against eager.
- `BundledProgram`: a program with test cases, saved as a `.bpte` that the
  runtime runs and checks.
- `find_first_divergence`: steps a program through the runtime and reports
  the first operator whose result departs from eager
  (`python -m executorch.devtools.find_divergence`).
- `python -m executorch.devtools.report`: an HTML report of a run.
"""

import executorch.devtools.inspector as inspector
from executorch.devtools.bundled_program.core import BundledProgram
from executorch.devtools.etrecord import ETRecord, generate_etrecord, parse_etrecord
from executorch.devtools.inspector import Inspector
from executorch.devtools.numeric_debugger import (
    DivergenceReport,
    OpComparison,
    eager_node_values,
    find_first_divergence,
)

__all__ = [
    "BundledProgram",
    "DivergenceReport",
    "ETRecord",
    "Inspector",
    "OpComparison",
    "eager_node_values",
    "find_first_divergence",
    "generate_etrecord",
    "inspector",
    "parse_etrecord",
]
