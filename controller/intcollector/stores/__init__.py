"""Where the collector's metric values go: a ``Store`` takes points
(measurement, tags, fields, time). ``SqliteStore`` is the embedded default,
``InfluxWriter`` sends InfluxDB 1.x line protocol over HTTP, ``MemoryStore``
keeps points in a list (tests, counting)."""

from controller.intcollector.stores.base import FieldValue, MemoryStore, Point, Store
from controller.intcollector.stores.influx import InfluxWriter
from controller.intcollector.stores.lineprotocol import encode_line, encode_lines
from controller.intcollector.stores.sqlite import SqliteStore

__all__ = ["FieldValue", "InfluxWriter", "MemoryStore", "Point", "SqliteStore", "Store",
           "encode_line", "encode_lines"]
