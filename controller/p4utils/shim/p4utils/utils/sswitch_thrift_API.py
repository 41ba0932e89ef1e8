"""p4-utils' ``SimpleSwitchThriftAPI``, over P4Runtime."""

from controller.p4utils.errors import UIn_Error
from controller.p4utils.thrift_api import SimpleSwitchThriftAPI

__all__ = ["SimpleSwitchThriftAPI", "UIn_Error"]
