"""A collector for standard INT: Telemetry Report v0.5/v1.0/v2.0 parsing (``reports``)."""
