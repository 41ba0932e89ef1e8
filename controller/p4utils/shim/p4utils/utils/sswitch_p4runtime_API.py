"""p4-utils' ``SimpleSwitchP4RuntimeAPI``, over intbed's P4Runtime client."""

from controller.p4utils.p4runtime_api import SimpleSwitchP4RuntimeAPI

__all__ = ["SimpleSwitchP4RuntimeAPI"]
