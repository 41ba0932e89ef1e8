"""InfluxDB 1.x line protocol, as a pure function of a point:

    measurement[,tag=value...] field=value[,field=value...] time_ns

Escaping, with a backslash: commas and spaces in the measurement; commas,
equals signs and spaces in tag keys, tag values and field keys; double
quotes and backslashes inside string field values, which are quoted.
Integers end in ``i``; booleans are ``true``/``false``. Tags are sorted by
key (the order InfluxDB stores them in) and a tag with an empty value is
left out, as InfluxDB does not accept one.

What the protocol cannot carry raises ValueError instead of writing a line
that means something else: a newline anywhere, a name ending in a
backslash (it would escape the separator after it), an empty measurement,
tag key or field key, a point without fields, NaN or infinite floats and
integers outside int64.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from sinks.intcollector.stores.base import FieldValue, Point

_MEASUREMENT = str.maketrans({",": "\\,", " ": "\\ "})
_KEY = str.maketrans({",": "\\,", "=": "\\=", " ": "\\ "})
_STRING = str.maketrans({"\\": "\\\\", '"': '\\"'})
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _name(text: str, table: dict[int, str], what: str) -> str:
    if not text:
        raise ValueError(f"empty {what}")
    if "\n" in text or "\r" in text:
        raise ValueError(f"newline in {what} {text!r}")
    if text[-1] == "\\":
        raise ValueError(f"{what} {text!r} ends in a backslash")
    return text.translate(table)


def _field_value(value: FieldValue, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValueError(f"field {key}: {value} is outside int64")
        return f"{value}i"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"field {key}: {value} is not finite")
        return repr(float(value))  # float(): numpy's repr names its type
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            raise ValueError(f"newline in string field {key}")
        return '"' + value.translate(_STRING) + '"'
    if hasattr(value, "item"):  # a numpy scalar
        return _field_value(value.item(), key)
    raise ValueError(f"field {key}: cannot write {type(value).__name__}")


def encode_line(point: Point) -> str:
    """One point as one line, without the newline."""
    measurement, tags, fields, time_ns = point
    parts = [_name(measurement, _MEASUREMENT, "measurement")]
    for key, value in sorted(tags):
        if value != "":
            parts.append(_name(key, _KEY, "tag key") + "=" + _name(value, _KEY, "tag value"))
    if not fields:
        raise ValueError(f"point of {measurement!r} has no fields")
    field_set = ",".join(_name(key, _KEY, "field key") + "=" + _field_value(value, key)
                         for key, value in fields.items())
    return f"{','.join(parts)} {field_set} {int(time_ns)}"


def encode_lines(points: Iterable[Point]) -> str:
    """Points as a write request body: one line each, newline-terminated."""
    return "".join(encode_line(point) + "\n" for point in points)
