"""INT-label's control plane (Song, Pan et al., sections 3.2-3.4 and 5).

- ``pro``: Algorithm 3, the per-port shift S written by P4Runtime MODIFY;
- ``config``: the data-plane parameters and their installation on a switch.

The host side (reports, the INT database, the aging store and the
collector that feeds them) is ``sinks.intlabel``. Apps get a clock,
P4Runtime clients and packet endpoints, never a target: the same code runs
on the ``sim`` target (virtual time, memory stores) and on live switches
(wall clock, Redis stores behind the same interfaces).
"""

from controller.intlabel.config import (
    CollectorEndpoint,
    IntLabelConfig,
    IntLabelConfigError,
    SpecificFlow,
    configure_switch,
)
from controller.intlabel.pro import ProLoop, ProPass, ShiftChange

__all__ = [
    "CollectorEndpoint",
    "IntLabelConfig",
    "IntLabelConfigError",
    "ProLoop",
    "ProPass",
    "ShiftChange",
    "SpecificFlow",
    "configure_switch",
]
