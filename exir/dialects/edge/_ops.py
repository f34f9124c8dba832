"""Edge dialect operators.

An Edge operator wraps one ATen (or custom) `OpOverload`. Graphs in the Edge
dialect call these wrappers instead of the ATen overloads, which marks a graph
as having passed through `to_edge` and gives later passes one place to find the
underlying schema (`._op`, `._schema`). Wrappers are interned: there is exactly
one `EdgeOpOverload` per `OpOverload`, so targets compare with `is`/`==`.
"""

from typing import Any, Dict, List

import torch
from torch._ops import OpOverload


class EdgeOpOverload:
    """The Edge dialect counterpart of one `torch._ops.OpOverload`.

    Calling it calls the wrapped overload, so an Edge graph still runs eagerly
    (`ExportedProgram.module()`), and fake tensors propagate through it.
    """

    # fx renders call targets as `<__module__>.<__name__>`; this makes an Edge
    # graph print its targets as `executorch.exir.dialects.edge._ops.aten.add.Tensor`.
    __module__ = "executorch.exir.dialects.edge._ops"

    def __init__(self, op: OpOverload):
        self._op = op
        self._edge_schema = None
        self.__name__ = (
            f"{op.namespace}.{op._schema.name.split('::')[1]}.{op._overloadname}"
        )
        self.__qualname__ = self.__name__

    @property
    def _schema(self) -> "EdgeFunctionSchema":
        """The ATen schema, whose arguments and returns also carry the Edge
        dialect's dtype constraints (`allowed_types`)."""
        if self._edge_schema is None:
            self._edge_schema = EdgeFunctionSchema(self._op)
        return self._edge_schema

    @property
    def _overloadname(self) -> str:
        return self._op._overloadname

    @property
    def namespace(self) -> str:
        return self._op.namespace

    @property
    def tags(self):
        return self._op.tags

    def name(self) -> str:
        """The qualified overload name, e.g. `aten::add.Tensor`."""
        return self._op.name()

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<EdgeOpOverload: {self.name()}>"

    __str__ = __repr__

    # Interned objects: copies of a graph must keep calling the same wrapper.
    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        return (edge_op, (self._op,))


class EdgeArgument:
    """An argument (or return) of an Edge operator's schema: the ATen
    argument's attributes, and `allowed_types`, the dtypes the Edge
    dialect's dtype table allows for it (None: no constraint recorded,
    e.g. for a non-tensor argument)."""

    def __init__(self, argument: torch._C.Argument, allowed_types):
        self._argument = argument
        self.allowed_types = allowed_types

    def __getattr__(self, name: str):
        return getattr(self._argument, name)

    def __str__(self) -> str:
        return str(self._argument)

    __repr__ = __str__


class EdgeFunctionSchema:
    """An Edge operator's schema: prints and reads as the ATen schema; its
    `arguments` and `returns` are `EdgeArgument`s."""

    def __init__(self, op: OpOverload):
        # Imported here: the table is read on first use only.
        from executorch.exir.dialects.edge.dtype_table import allowed_dtypes

        self._schema = op._schema
        name = op.name()
        self.arguments: List[EdgeArgument] = [
            EdgeArgument(a, allowed_dtypes(name, a.name))
            for a in self._schema.arguments
        ]
        self.returns: List[EdgeArgument] = [
            EdgeArgument(r, allowed_dtypes(name, f"__ret_{i}"))
            for i, r in enumerate(self._schema.returns)
        ]

    def __getattr__(self, name: str):
        return getattr(self._schema, name)

    def __str__(self) -> str:
        return str(self._schema)

    __repr__ = __str__


_EDGE_OPS: Dict[OpOverload, EdgeOpOverload] = {}


def edge_op(op: OpOverload) -> EdgeOpOverload:
    """Returns the (unique) Edge operator wrapping `op`."""
    if isinstance(op, EdgeOpOverload):
        return op
    if op not in _EDGE_OPS:
        _EDGE_OPS[op] = EdgeOpOverload(op)
    return _EDGE_OPS[op]


def to_aten_op(target: Any) -> Any:
    """Unwraps an Edge operator; returns any other call target unchanged."""
    return target._op if isinstance(target, EdgeOpOverload) else target


class EdgeOpOverloadPacket:
    """All overloads of one operator name, e.g. `ops.edge.aten.add`; attribute
    access yields an `EdgeOpOverload` (`ops.edge.aten.add.Tensor`)."""

    def __init__(self, namespace: str, name: str):
        self._namespace = namespace
        self._name = name

    def _packet(self):
        return getattr(getattr(torch.ops, self._namespace), self._name)

    def overloads(self):
        return self._packet().overloads()

    def __getattr__(self, overload: str) -> EdgeOpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        return edge_op(getattr(self._packet(), overload))

    def __repr__(self) -> str:
        return f"<EdgeOpOverloadPacket: {self._namespace}::{self._name}>"


class _EdgeNamespace:
    """`ops.edge.<namespace>`: operator packets by name."""

    def __init__(self, namespace: str):
        self._namespace = namespace

    def __getattr__(self, name: str) -> EdgeOpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        # Fails with torch's own message when the operator does not exist.
        getattr(getattr(torch.ops, self._namespace), name)
        return EdgeOpOverloadPacket(self._namespace, name)


class _EdgeDialect:
    """`ops.edge`: Edge operators by namespace."""

    def __getattr__(self, namespace: str) -> _EdgeNamespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        if namespace == "dim_order_ops":
            # Make sure the custom operators are registered before lookup.
            from executorch.exir.passes import dim_order_ops_registry  # noqa: F401
        return _EdgeNamespace(namespace)
