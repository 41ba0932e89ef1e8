"""Host-side telemetry sinks and their analysis: what runs where reports
arrive (collectors, flow caches, stores, decoders), apart from the
control-plane apps of ``controller`` that write to switches. A sink never
imports a controller; a controller may read a sink's store (INT-label Pro
reads the INT database).
"""
