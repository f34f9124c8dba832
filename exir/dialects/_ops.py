"""Operators of the EXIR dialects: `ops.edge.aten.add.Tensor` is the Edge
dialect's `aten::add.Tensor`; `bind_pattern_to_op` registers backend
dialect operators."""

from typing import Callable

from torch.library import Library

from .edge._ops import _EdgeDialect


class _Dialects:
    edge = _EdgeDialect()


ops = _Dialects()


def bind_pattern_to_op(library: Library, schema_or_name: str) -> Callable:
    """Decorator: makes the decorated pattern (a function of ATen or Edge
    operators) the kernel of the backend operator `schema_or_name` in
    `library`. A full schema ("add_relu(Tensor self, Tensor other) ->
    Tensor") defines the operator first; a bare name refers to one the
    library already defines.

    The pattern is registered as the operator's CompositeImplicitAutograd
    kernel: the operator runs eagerly without a kernel of its own, and
    re-exporting a graph that uses it decomposes it back into the pattern.
    """

    def bind(pattern: Callable) -> Callable:
        name = schema_or_name
        if "(" in schema_or_name:
            name = schema_or_name.split("(", 1)[0]
            library.define(schema_or_name)
        library.impl(name, pattern, "CompositeImplicitAutograd")
        return pattern

    return bind
