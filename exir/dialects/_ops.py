"""Operators of the EXIR dialects: `ops.edge.aten.add.Tensor` is the Edge
dialect's `aten::add.Tensor`."""

from .edge._ops import _EdgeDialect


class _Dialects:
    edge = _EdgeDialect()


ops = _Dialects()
