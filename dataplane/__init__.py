"""intbed's v1model target: P4-16 front end, engine, runtime and simulator."""
