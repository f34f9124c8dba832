"""The Inspector: runtime events (ETDump) joined with the compiler's record
of the program (ETRecord)."""

from executorch.devtools.inspector._inspector import (
    Event,
    EventBlock,
    Inspector,
    PerfData,
    TimeScale,
)
from executorch.devtools.inspector.numerical_comparator import compare_results

__all__ = [
    "Event",
    "EventBlock",
    "Inspector",
    "PerfData",
    "TimeScale",
    "compare_results",
]
