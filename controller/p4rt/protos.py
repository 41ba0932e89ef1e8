"""P4Runtime's protobuf classes for the controller side.

The ``p4runtime`` wheel's ``*_pb2`` modules come from a protoc older than the
installed protobuf accepts, so they cannot be imported. Their embedded file
descriptors are sound, so the classes are built here from those bytes, in a
descriptor pool of the controller's own. Messages cross to another pool (the
switch side builds its own) as serialized bytes, exactly as over gRPC.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path
from types import SimpleNamespace

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
from google.rpc import status_pb2

# Dependency order: each file imports only the ones before it.
_MODULES = (
    "p4.config.v1.p4types_pb2",
    "p4.config.v1.p4info_pb2",
    "p4.v1.p4data_pb2",
    "p4.v1.p4runtime_pb2",
)


def _descriptor_bytes(module: str) -> bytes:
    """The ``serialized_pb`` literal of a generated module, read from its source."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"{module} not found: install the p4runtime package")
    source = Path(spec.origin).read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "serialized_pb":
                    return ast.literal_eval(kw.value)
    raise ImportError(f"{module} embeds no serialized file descriptor")


@cache
def protos() -> SimpleNamespace:
    """``protos().p4runtime_pb2.WriteRequest``, ``protos().p4info_pb2.P4Info``, ...

    One namespace per module, holding its message classes and enums.
    """
    pool = descriptor_pool.DescriptorPool()
    for dep in (any_pb2, status_pb2):
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(dep.DESCRIPTOR.serialized_pb))
    out = {}
    for module in _MODULES:
        fdp = descriptor_pb2.FileDescriptorProto.FromString(_descriptor_bytes(module))
        pool.Add(fdp)
        fd = pool.FindFileByName(fdp.name)
        ns = SimpleNamespace(DESCRIPTOR=fd)
        for name, desc in fd.message_types_by_name.items():
            setattr(ns, name, message_factory.GetMessageClass(desc))
        for name, enum in fd.enum_types_by_name.items():
            setattr(ns, name, SimpleNamespace(**{v.name: v.number for v in enum.values}))
        out[module.rsplit(".", 1)[1]] = ns
    return SimpleNamespace(**out)


def convert(message, namespace: SimpleNamespace):
    """``message`` as the same-named class of ``namespace`` (a bytes round trip
    when the classes come from different descriptor pools)."""
    cls = getattr(namespace, type(message).DESCRIPTOR.name)
    if isinstance(message, cls):
        return message
    return cls.FromString(message.SerializeToString())
