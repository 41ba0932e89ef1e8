"""Where the engine runs: ``sim`` (virtual-time network in one process) and
``softswitch`` (``intbed-switch``, one process per switch on Linux ports)."""
