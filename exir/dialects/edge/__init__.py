"""The Edge dialect: Core ATen operators wrapped as `EdgeOpOverload`s."""

from ._ops import EdgeOpOverload, EdgeOpOverloadPacket, edge_op, to_aten_op

__all__ = ["EdgeOpOverload", "EdgeOpOverloadPacket", "edge_op", "to_aten_op"]
