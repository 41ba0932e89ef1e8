"""Switch state (tables, counters, registers, meters) and the control-plane view of it."""
