"""P4Runtime's protobuf classes for the controller side: one descriptor pool
of the controller's own (see ``p4proto``)."""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

from p4proto import convert, load_protos

__all__ = ["convert", "protos"]


@cache
def protos() -> SimpleNamespace:
    """``protos().p4runtime_pb2.WriteRequest``, ``protos().p4info_pb2.P4Info``, ..."""
    return load_protos()
