"""intbed's v1model target: P4-16 front end, engine, runtime and simulator."""

from common import accel

accel.install()  # the hot modules below run compiled where built (common.accel)
