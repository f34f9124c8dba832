"""Where in the user's Python code a graph node came from, for error
messages."""

from typing import Optional

import torch


def source_line_of_trace(trace: Optional[str]) -> str:
    """The innermost frame of a Python stack trace ('File "m.py", line 12,
    in forward\n    return x + y'), or a note that there is none."""
    if not trace:
        return "<no stack trace recorded>"
    lines = [line for line in trace.strip().splitlines() if line.strip()]
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].lstrip().startswith("File "):
            return "\n".join(line.strip() for line in lines[i : i + 2])
    return lines[-1].strip()


def source_line(node: torch.fx.Node) -> str:
    """The innermost user frame of the node's stack trace."""
    return source_line_of_trace(node.meta.get("stack_trace"))
