"""The error a bad traffic definition raises.

It is an ``IntbedError`` so the CLI prints it as one ``error: message`` line,
and a ``ValueError`` so library callers can catch it the usual way.
"""

from __future__ import annotations

from common.errors import IntbedError


class TrafficError(IntbedError, ValueError):
    """An ill-formed flow, schedule or address."""
