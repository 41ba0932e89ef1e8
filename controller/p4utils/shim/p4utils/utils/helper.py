"""p4-utils' ``load_topo``."""

from controller.p4utils.topology import load_topo

__all__ = ["load_topo"]
