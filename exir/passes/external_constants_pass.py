"""Tags constants to be stored outside the `.pte`, in `.ptd` files
(upstream ExecuTorch's passes of the same names): the program's own
constants (`external_constants_pass`), or the weights delegates store
(`delegate_external_constants_pass_unlifted`).

The emitter writes a tagged constant as a tensor whose data is EXTERNAL,
found at run time by its fully qualified name (e.g. "linear.weight") in the
data map passed to load_method; its bytes go to the `.ptd` file named by the
tag. Lifted tensor constants (`torch.tensor(...)` literals in forward) stay
in the `.pte`: they belong to the code, not to the weights.
"""

from typing import Callable, Optional

import torch

from executorch.exir.pass_base import PassResult
from executorch.exir.tensor import TensorSpec

# The tag (file name without .ptd) when the caller gives no function.
DEFAULT_EXTERNAL_CONSTANT_TAG = "_default_external_constant"


def external_constants_pass(
    gm: torch.fx.GraphModule,
    gen_tag_fn: Optional[Callable[[torch.fx.Node], Optional[str]]] = None,
) -> PassResult:
    """Sets `node.meta["constant_tag"]` on every constant placeholder of `gm`
    (and its submodules): `gen_tag_fn(node)` when given (None keeps that
    constant in the `.pte`), else DEFAULT_EXTERNAL_CONSTANT_TAG."""
    modified = False
    for module in gm.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            if node.op != "placeholder" or "_lifted_tensor" in node.name:
                continue
            spec = node.meta.get("spec")
            if not (isinstance(spec, TensorSpec) and spec.const):
                continue
            tag = gen_tag_fn(node) if gen_tag_fn else DEFAULT_EXTERNAL_CONSTANT_TAG
            node.meta["constant_tag"] = tag
            modified = True
    return PassResult(gm, modified)


def delegate_external_constants_pass_unlifted(
    module: torch.nn.Module,
    gen_tag_fn: Optional[Callable[[torch.fx.Node], Optional[str]]] = None,
) -> PassResult:
    """Tags the weights that delegates store for `.ptd` files: on an
    unlifted module (`torch.export.export(...).module()`, where weights are
    `get_attr` nodes), sets `node.meta["custom"]["delegate_constant_tag"]`
    to `gen_tag_fn(node)`. Exporting the module again carries the tag to
    the weight's placeholder, and a backend (XNNPACK) puts the weight's
    named data in the `.ptd` file of that name."""
    modified = False
    if gen_tag_fn is None:
        return PassResult(module, modified)
    for submodule in module.modules():
        if not isinstance(submodule, torch.fx.GraphModule):
            continue
        for node in submodule.graph.nodes:
            if node.op == "get_attr":
                node.meta.setdefault("custom", {})
                node.meta["custom"]["delegate_constant_tag"] = gen_tag_fn(node)
                modified = True
    return PassResult(module, modified)
