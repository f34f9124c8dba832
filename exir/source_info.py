"""Where in the user's Python code a graph node came from, for error
messages."""

from typing import Optional

import torch


def source_line_of_trace(trace: Optional[str]) -> str:
    """The innermost frame of a Python stack trace ('File "m.py", line 12,
    in forward\n    return x + y'), or a note that there is none. Frames of
    code that torch generated (the graphs of control-flow operators, in
    `<eval_with_key>` files) are passed over for the user's own."""
    if not trace:
        return "<no stack trace recorded>"
    lines = [line for line in trace.strip().splitlines() if line.strip()]
    frames = [i for i, line in enumerate(lines) if line.lstrip().startswith("File ")]
    if not frames:
        return lines[-1].strip()
    user = [i for i in frames if not lines[i].lstrip().startswith('File "<eval_with')]
    i = (user or frames)[-1]
    return "\n".join(line.strip() for line in lines[i : i + 2])


def source_line(node: torch.fx.Node) -> str:
    """The innermost user frame of the node's stack trace."""
    return source_line_of_trace(node.meta.get("stack_trace"))
