"""Control-plane applications; they speak P4Runtime only."""
