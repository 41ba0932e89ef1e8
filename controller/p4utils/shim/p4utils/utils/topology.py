"""p4-utils' ``NetworkGraph`` and its exceptions."""

from controller.p4utils.topology import (
    IntfDoesNotExist,
    InvalidHostIP,
    NetworkGraph,
    NodeDoesNotExist,
)

__all__ = ["IntfDoesNotExist", "InvalidHostIP", "NetworkGraph", "NodeDoesNotExist"]
