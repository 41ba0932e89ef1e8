"""Sink reports of ``p4src/pint.p4`` into the recording module's batches.

A report is Ethernet (EtherType 0x88B5) and 29 bytes: packet id, IPv4
source and destination, protocol, L4 ports, IPv4 identification, hop
count, budget, digest, the sink's switch id (all big-endian). Flows get
small integer keys in order of first appearance (``flows`` maps them back
to 5-tuples). A report whose packet id is not the one its header fields
hash to, or a frame of another kind, is counted and explained, not fed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .hashing import packet_ids
from .recorder import Recorder

__all__ = ["REPORT_ETHERTYPE", "REPORT_LEN", "SinkReports"]

REPORT_ETHERTYPE = 0x88B5
REPORT_LEN = 14 + 29
_DTYPE = np.dtype([
    ("pid", ">u4"), ("src", ">u4"), ("dst", ">u4"), ("proto", "u1"), ("sport", ">u2"),
    ("dport", ">u2"), ("ip_id", ">u2"), ("hops", "u1"), ("budget", "u1"),
    ("digest", ">u4"), ("switch", ">u4"),
])
_MAX_EXPLANATIONS = 100

Flow = tuple[int, int, int, int, int]


@dataclass
class SinkReports:
    """Parses report frames and hands them to a ``Recorder`` in batches."""

    recorder: Recorder
    flows: dict[int, Flow] = field(default_factory=dict)
    problems: Counter[str] = field(default_factory=Counter)
    explanations: list[str] = field(default_factory=list)
    reported: int = 0
    _keys: dict[Flow, int] = field(default_factory=dict)

    def _explain(self, kind: str, message: str) -> None:
        self.problems[kind] += 1
        if len(self.explanations) < _MAX_EXPLANATIONS:
            self.explanations.append(message)

    def feed(self, frames: Iterable[bytes]) -> int:
        """Parse and ingest a batch; returns how many reports were taken."""
        good = []
        for i, frame in enumerate(frames):
            if len(frame) != REPORT_LEN or int.from_bytes(frame[12:14], "big") != REPORT_ETHERTYPE:
                self._explain("not-a-report", f"frame {i}: {len(frame)} bytes, EtherType "
                              f"0x{int.from_bytes(frame[12:14], 'big'):04x}; not a PINT report")
                continue
            good.append(frame[14:])
        if not good:
            return 0
        rec = np.frombuffer(b"".join(good), dtype=_DTYPE)
        want = packet_ids(rec["src"], rec["dst"], rec["proto"], rec["sport"], rec["dport"],
                          rec["ip_id"])
        pid_ok = want == rec["pid"]
        budget_ok = rec["budget"] == self.recorder.plan.budget
        for j in np.nonzero(~pid_ok)[0]:
            self._explain("bad-packet-id", f"report with packet id 0x{int(rec['pid'][j]):08x} "
                          f"but header fields hashing to 0x{int(want[j]):08x}; dropped")
        for j in np.nonzero(pid_ok & ~budget_ok)[0]:
            self._explain("wrong-budget", f"report with a {int(rec['budget'][j])}-bit digest, "
                          f"the plan has {self.recorder.plan.budget}; install this plan")
        ok = pid_ok & budget_ok
        rec = rec[ok]
        keys = np.empty(rec.shape[0], dtype=np.int64)
        for j, row in enumerate(zip(rec["src"].tolist(), rec["dst"].tolist(),
                                    rec["proto"].tolist(), rec["sport"].tolist(),
                                    rec["dport"].tolist())):
            key = self._keys.get(row)
            if key is None:
                key = self._keys[row] = len(self._keys)
                self.flows[key] = row
            keys[j] = key
        self.reported += int(rec.shape[0])
        self.recorder.ingest(keys, rec["pid"].astype(np.uint32), rec["hops"].astype(np.int64),
                             rec["digest"].astype(np.uint64))
        return int(rec.shape[0])
