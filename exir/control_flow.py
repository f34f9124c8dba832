"""Graph-level control-flow operations of the ExecuTorch dialect.

`LowerControlFlowPass` inlines the branches and loop bodies of `torch.cond`,
`map` and `torch.while_loop` into the method's graph, in the order their
instructions will run, separated by the nodes below. The emitter turns them
into `JumpFalseCall`, `MoveCall` and prim-op instructions; memory planning
reads the labels and jumps to find loops. Called eagerly, they do nothing
(a lowered graph is run by the runtime, not by Python).
"""


def label(name: str) -> None:
    """Marks the position a jump to `name` continues at."""


def jump_false(condition, name: str) -> None:
    """Continues at label `name` when `condition` (a bool, or a one-element
    bool tensor) is false; otherwise at the next node."""


def jump(name: str) -> None:
    """Always continues at label `name` (a backward jump closes a loop)."""


def int_variable(initial: int) -> int:
    """An Int value set to `initial` at this point of every run (a loop
    counter), which `increment` then updates in place."""
    return initial


def increment(variable) -> None:
    """Adds one to an `int_variable`, in place."""


def copy_index(copy_to, copy_from, index) -> None:
    """`copy_to[index] = copy_from`, growing `copy_to`'s first dimension to
    `index + 1` (the runtime's `executorch_prim::et_copy_index`): how a map
    loop stacks its results."""


def is_jump(node) -> bool:
    """Whether `node` calls `jump` or `jump_false`."""
    return node.op == "call_function" and node.target in (jump, jump_false)
