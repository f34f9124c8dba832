"""Which operators a lowered program delegates: `get_delegation_info`."""

from executorch.devtools.backend_debug.delegation_info import (
    DelegationBreakdown,
    DelegationInfo,
    get_delegation_info,
)

__all__ = ["DelegationBreakdown", "DelegationInfo", "get_delegation_info"]
