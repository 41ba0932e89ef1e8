"""Names of generated functions: one helper that the generator, calls and
tables all use, kept here so that none of them holds a copy."""

from __future__ import annotations


def ident(name: str) -> str:
    """A control-plane name (``ingress.fwd``) as a Python identifier
    fragment: every character that is not alphanumeric becomes ``_``."""
    return "".join(c if c.isalnum() else "_" for c in name)
