"""IR to generated Python, v1model externs and the packet model."""
