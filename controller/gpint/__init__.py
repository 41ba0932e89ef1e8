"""GPINT with SQR (Simsek, Ergenç, Onur): probe-based INT on balanced paths
with in-switch recovery. Path planners (``planners``: GPINT-k, Euler
INT-path, SNMP-style polling), the probe format (``probe``, see
docs/gpint_format.md) and the monitoring module with its data recovery loop
(``recovery``, ``monitor``: the paper's Algorithms 1 and 2)."""
