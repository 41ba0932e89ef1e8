"""Packet builders, flow schedules, senders and receivers.

Hosts are given as plain address strings (any object with ``mac`` and
``ip``), so traffic definitions do not depend on how a topology is built.
"""

# ruff: noqa: E402 - the finder must be in place before the modules import
from fastpath import loader

loader.install()  # packets and receiver run compiled where built (fastpath.loader)

from traffic.errors import TrafficError
from traffic.packets import Endpoint, FlowKey, FlowSpec, PacketFactory, scapy_packet
from traffic.receiver import Receiver, RxStats, parse_frame
from traffic.schedules import (
    RandomDestinations,
    Schedule,
    SendEvent,
    constant_rate,
    flows_to_random_servers,
    merge,
    poisson,
    random_destinations,
)
from traffic.sender import Sender, SentLog

__all__ = [
    "Endpoint",
    "FlowKey",
    "FlowSpec",
    "PacketFactory",
    "RandomDestinations",
    "Receiver",
    "RxStats",
    "Schedule",
    "SendEvent",
    "Sender",
    "SentLog",
    "TrafficError",
    "constant_rate",
    "flows_to_random_servers",
    "merge",
    "parse_frame",
    "poisson",
    "random_destinations",
    "scapy_packet",
]
