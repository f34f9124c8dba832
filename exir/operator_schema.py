"""Helpers over operator schemas (`torch._C.FunctionSchema`)."""

from typing import Any, Dict, List, Optional, Tuple

import torch
from torch._ops import OpOverload


def bind_arguments(
    schema: torch._C.FunctionSchema, args: Tuple, kwargs: Dict[str, Any]
) -> Dict[str, Any]:
    """Maps every argument name of `schema` to the value passed in `args` and
    `kwargs`, or to its default value when it was not passed (arguments
    without a default that were not passed, such as unbound out arguments,
    are left out)."""
    bound = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


def split_call(
    schema: torch._C.FunctionSchema, values: Dict[str, Any]
) -> Tuple[Tuple, Dict[str, Any]]:
    """The (args, kwargs) that call `schema` with the named `values`:
    positional arguments positionally, up to the first one missing."""
    args: List[Any] = []
    kwargs: Dict[str, Any] = {}
    positional = True
    for arg in schema.arguments:
        if arg.name not in values:
            positional = False
            continue
        if positional and not arg.kwarg_only:
            args.append(values[arg.name])
        else:
            positional = False
            kwargs[arg.name] = values[arg.name]
    return tuple(args), kwargs


def out_arguments(schema: torch._C.FunctionSchema) -> List[torch._C.Argument]:
    return [a for a in schema.arguments if a.is_out]


def _signature(args) -> List[Tuple[str, str]]:
    return [(a.name, str(a.type)) for a in args]


def find_out_variant(op: OpOverload) -> Optional[OpOverload]:
    """The out-variant overload of a functional operator: the overload of the
    same operator with out arguments whose other arguments are the functional
    ones. Overloads that drop some functional arguments (like
    `_to_dim_order_copy.out`, whose dtype is `out`'s) are accepted when no
    exact match exists, if every dropped argument is keyword-only."""
    functional = op._schema.arguments
    packet = getattr(getattr(torch.ops, op.namespace), op._schema.name.split("::")[1])
    fallback = None
    for name in packet.overloads():
        candidate = getattr(packet, name)
        outs = out_arguments(candidate._schema)
        if not outs:
            continue
        inputs = [a for a in candidate._schema.arguments if not a.is_out]
        if _signature(inputs) == _signature(functional):
            return candidate
        names = {a.name for a in inputs}
        kept = [a for a in functional if a.name in names]
        if (
            len(kept) == len(inputs)
            and _signature(kept) == _signature(inputs)
            and all(a.kwarg_only for a in functional if a.name not in names)
        ):
            fallback = candidate
    return fallback
