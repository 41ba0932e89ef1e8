"""Where the collector's metric values go: a ``Store`` takes points
(measurement, tags, fields, time). ``SqliteStore`` is the embedded default,
``InfluxWriter`` sends InfluxDB 1.x line protocol over HTTP, ``MemoryStore``
keeps points in a list (tests, counting)."""

from sinks.intcollector.stores.base import FieldValue, MemoryStore, Point, Store
from sinks.intcollector.stores.influx import InfluxWriter
from sinks.intcollector.stores.lineprotocol import encode_line, encode_lines
from sinks.intcollector.stores.sqlite import SqliteStore

__all__ = ["FieldValue", "InfluxWriter", "MemoryStore", "Point", "SqliteStore", "Store",
           "encode_line", "encode_lines"]
