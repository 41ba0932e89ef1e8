"""A flow's path from the items of its reports, however they were labeled.

With specific-flow telemetry (section 3.3) one report carries every hop.
Without it each hop labels the flow's packets on its own schedule, so a
report carries some hops and the path must be assembled from several. The
collector knows the wiring, ``peers[(switch_id, port)]`` = the switch id on
the other end, or None for a host; an item names its switch and its ingress
and egress ports, so the hops chain: the first hop entered from a host, each
next hop is the peer behind the previous hop's egress port and entered from
it, the last leaves toward a host. Every packet of a flow takes one path, so
one item per switch is enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sinks.intlabel.report import IntItem

Peers = Mapping[tuple[int, int], int | None]


class PathAssembler:
    """Collects one flow's items; ``path`` once they chain from host to host."""

    def __init__(self, peers: Peers) -> None:
        self.peers = peers
        self.hops: dict[int, tuple[int, int]] = {}  # switch id -> (ingress, egress port)

    def feed(self, items: Iterable[IntItem]) -> tuple[int, ...] | None:
        for item in items:
            self.hops.setdefault(item.switch_id, (item.ingress_port, item.egress_port))
        return self.path()

    def path(self) -> tuple[int, ...] | None:
        """The switch ids from the first hop to the last, or None while a hop
        is missing."""
        first = [sid for sid, (inp, _) in self.hops.items()
                 if (sid, inp) in self.peers and self.peers[(sid, inp)] is None]
        if len(first) != 1:
            return None
        path = [first[0]]
        while len(path) <= len(self.hops):
            sid = path[-1]
            nxt = self.peers.get((sid, self.hops[sid][1]), -1)
            if nxt is None:
                return tuple(path)
            if nxt == -1 or nxt not in self.hops:
                return None
            inp = self.hops[nxt][0]
            if self.peers.get((nxt, inp)) != sid:
                return None
            path.append(nxt)
        return None
