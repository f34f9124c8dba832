"""ETRecord: the compiler's side of a program (Edge program with debug
handles and source information, instruction and delegate maps), saved for
the Inspector."""

from executorch.devtools.etrecord._etrecord import (
    ETRecord,
    ETRecordError,
    generate_etrecord,
    parse_etrecord,
)

__all__ = ["ETRecord", "ETRecordError", "generate_etrecord", "parse_etrecord"]
