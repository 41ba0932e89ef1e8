"""intbed's v1model target: P4-16 front end, engine, runtime and simulator."""

from fastpath import loader

loader.install()  # the hot modules below run compiled where built (fastpath.loader)
