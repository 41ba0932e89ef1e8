"""A packet sink that records what arrived, and statistics against a sent log.

Per packet it keeps the arrival time, frame size, an 8-byte XXH3-64 hash of
the transport payload (of the whole frame when there is no IPv4 UDP/TCP
payload), the flow 5-tuple and the sequence number a ``PacketFactory``
wrote into the first 8 payload bytes. The payload ends where the IPv4 total
length says, so Ethernet padding does not change the hash, and header
rewrites on the way (TTL, DSCP, MACs) do not either.
"""

from __future__ import annotations

import csv
import io
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TextIO

import cython
import numpy as np
from xxhash import xxh3_64_digest

from traffic.packets import ETHERTYPE_IPV4, SEQ_BYTES, FlowKey
from traffic.sender import SentLog

RECV_COLUMNS = (
    "arrival_us",
    "size",
    "hash",
    "src_ip",
    "dst_ip",
    "proto",
    "sport",
    "dport",
    "seq",
)
ETHERTYPE_VLAN = 0x8100
LATENCY_PERCENTILES = (50, 90, 99)
# parse_frame's constants as machine words when compiled (a test of a C
# value against a module's integer object boxes the value and looks the
# name up).
_VLAN = cython.declare(cython.Py_ssize_t, ETHERTYPE_VLAN)
_IPV4 = cython.declare(cython.Py_ssize_t, ETHERTYPE_IPV4)
_SEQ_BYTES = cython.declare(cython.Py_ssize_t, SEQ_BYTES)

_Q = struct.Struct("!Q")
_ntoa = socket.inet_ntoa
# The FlowKeys of flows seen lately, by their raw addresses and ports: a
# flow's packets share one key instead of formatting two addresses each.
# In Python the dictionary's key is (addresses, proto, sport, dport); on
# the compiled fast path it is those 13 bytes in one bytes object (one
# hash of a short string and a memcmp per probe, instead of a tuple's
# four hashes and compares and the objects it holds).
_FLOW_KEYS: dict[tuple[bytes, int, int, int] | bytes, FlowKey] = {}
_FLOW_KEYS_KEPT = 1 << 16


# On the compiled fast path the frame is read as bytes with offsets in
# machine words, so each header byte is a C read; Python ignores this.
@cython.locals(n=cython.Py_ssize_t, etype=cython.Py_ssize_t, off=cython.Py_ssize_t,
               vihl=cython.Py_ssize_t, ihl=cython.Py_ssize_t, total=cython.Py_ssize_t,
               end=cython.Py_ssize_t, proto=cython.Py_ssize_t, l4=cython.Py_ssize_t,
               data=cython.Py_ssize_t, sport=cython.Py_ssize_t, dport=cython.Py_ssize_t,
               b=bytes, i=cython.Py_ssize_t, u=cython.ulonglong, cache=dict,
               p=cython.p_char, q=cython.p_char)
def parse_frame(frame: bytes) -> tuple[FlowKey | None, int | None, bytes]:
    """Flow, sequence number and payload of an Ethernet frame.

    Understands one optional 802.1Q tag, IPv4 with options, UDP and TCP
    (with options); anything else, or a fragment after the first, gives no
    flow and the whole frame as payload.
    """
    b = frame if type(frame) is bytes else bytes(frame)
    n = len(b)
    if n < 34:
        return None, None, b
    etype = (b[12] << 8) | b[13]
    off = 14
    if etype == _VLAN:
        etype = (b[16] << 8) | b[17]
        off = 18
    if etype != _IPV4 or n < off + 20:
        return None, None, b
    vihl = b[off]
    ihl = (vihl & 0x0F) << 2
    total = (b[off + 2] << 8) | b[off + 3]
    if vihl >> 4 != 4 or ihl < 20 or total < ihl:
        return None, None, b
    if ((b[off + 6] & 0x1F) << 8) | b[off + 7]:
        return None, None, b
    end = off + total
    if end > n:
        end = n
    proto = b[off + 9]
    l4 = off + ihl
    if proto == 17:
        data = l4 + 8
    elif proto == 6 and l4 + 13 < end:
        data = l4 + ((b[l4 + 12] >> 4) << 2)
    else:
        return None, None, b
    if data > end:
        return None, None, b
    sport = (b[l4] << 8) | b[l4 + 1]
    dport = (b[l4 + 2] << 8) | b[l4 + 3]
    cache = _FLOW_KEYS
    if cython.compiled:  # the 13 bytes copied by C (no slice objects)
        p = PyBytes_AS_STRING(b)  # noqa: F821 (cimported in receiver.pxd)
        seen = PyBytes_FromStringAndSize(cython.NULL, 13)  # noqa: F821
        q = PyBytes_AS_STRING(seen)  # noqa: F821
        memcpy(q, p + off + 12, 8)  # noqa: F821
        q[8] = cython.cast(cython.char, proto)
        memcpy(q + 9, p + l4, 4)  # noqa: F821
    else:
        seen = (b[off + 12 : off + 20], proto, sport, dport)
    key = cache.get(seen)
    if key is None:
        if len(cache) >= _FLOW_KEYS_KEPT:
            cache.clear()
        addresses = b[off + 12 : off + 20]
        key = cache[seen] = FlowKey(
            _ntoa(addresses[:4]), _ntoa(addresses[4:]), proto, sport, dport
        )
    payload = (PyBytes_FromStringAndSize(p + data, end - data)  # noqa: F821
               if cython.compiled else b[data:end])
    seq = None
    if end - data >= _SEQ_BYTES:
        if cython.compiled:  # the big-endian sequence number, eight C reads
            u = 0
            for i in range(data, data + _SEQ_BYTES):
                u = (u << 8) | b[i]
            seq = u
        else:
            seq = _Q.unpack_from(b, data)[0]
    return key, seq, payload


class Arrival(NamedTuple):
    arrival_us: int
    size: int
    hash: bytes
    key: FlowKey | None
    seq: int | None


@dataclass(frozen=True, slots=True)
class RxStats:
    """Counts of what arrived; loss and latency when a sent log is given.

    ``unique`` counts distinct (flow, seq) pairs, ``duplicates`` the extra
    copies, ``unidentified`` packets without a flow and seq. ``lost`` are
    sent packets never seen, ``unexpected`` identified packets the log does
    not hold. Latency (first copy's arrival minus send time, microseconds)
    has ``min``, ``mean``, ``p50``, ``p90``, ``p99`` (numpy's linear
    interpolation) and ``max``.
    """

    received: int
    bytes: int
    unique: int
    duplicates: int
    unidentified: int
    first_us: int | None
    last_us: int | None
    sent: int | None = None
    lost: int | None = None
    loss_rate: float | None = None
    unexpected: int | None = None
    latency_us: dict[str, float] | None = None


class Receiver:
    """Records every frame handed to ``receive`` (or to the receiver itself,
    so it can be a host's packet callback)."""

    __slots__ = ("name", "times_us", "sizes", "hashes", "keys", "seqs")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.times_us: list[int] = []
        self.sizes: list[int] = []
        self.hashes: list[bytes] = []
        self.keys: list[FlowKey | None] = []
        self.seqs: list[int | None] = []

    def receive(self, frame: bytes, time_us: int) -> None:
        key, seq, payload = parse_frame(frame)
        self.times_us.append(time_us)
        self.sizes.append(len(frame))
        # XXH3-64 tells packets apart as well as a cryptographic hash does
        # here (nothing is adversarial) at a fortieth of BLAKE2b's cost.
        self.hashes.append(xxh3_64_digest(payload))
        self.keys.append(key)
        self.seqs.append(seq)

    def __call__(self, frame: bytes, time_us: int) -> None:
        self.receive(frame, time_us)

    def on_arrival(self, host: object, frame: bytes, time_ns: int) -> None:
        """A simulated host's packet handler (``SimHost.handlers``): the
        frame with its arrival time in nanoseconds, recorded in
        microseconds. Compiled, one call per packet into ``receive``'s C
        body (a lambda around ``receive`` was two calls and a division of
        integer objects)."""
        self.receive(frame, time_ns // 1000)

    def __len__(self) -> int:
        return len(self.times_us)

    def records(self) -> list[Arrival]:
        return list(map(Arrival, self.times_us, self.sizes, self.hashes, self.keys, self.seqs))

    @classmethod
    def merged(cls, receivers: Iterable[Receiver], name: str = "") -> Receiver:
        """One receiver holding the arrivals of several, in arrival order
        (ties: argument order)."""
        rows = [row for r in receivers for row in r.records()]
        rows.sort(key=lambda a: a.arrival_us)
        out = cls(name)
        for a in rows:
            out.times_us.append(a.arrival_us)
            out.sizes.append(a.size)
            out.hashes.append(a.hash)
            out.keys.append(a.key)
            out.seqs.append(a.seq)
        return out

    def write_csv(self, out: TextIO) -> None:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(RECV_COLUMNS)
        for t, size, h, k, seq in zip(self.times_us, self.sizes, self.hashes, self.keys, self.seqs):
            flow = ("", "", "", "", "") if k is None else k
            w.writerow((t, size, h.hex(), *flow, "" if seq is None else seq))

    def to_csv(self, path: str | Path) -> None:
        with open(path, "w", newline="") as f:
            self.write_csv(f)

    def log_bytes(self) -> bytes:
        """The CSV as bytes: two runs received the same packets at the same
        times exactly when these bytes are equal."""
        buf = io.StringIO()
        self.write_csv(buf)
        return buf.getvalue().encode()

    def stats(self, sent: SentLog | None = None) -> RxStats:
        first_seen: dict[tuple[FlowKey, int], int] = {}
        unidentified = 0
        for t, key, seq in zip(self.times_us, self.keys, self.seqs):
            if key is None or seq is None:
                unidentified += 1
            elif (key, seq) not in first_seen:
                first_seen[key, seq] = t
        identified = len(self) - unidentified
        base = {
            "received": len(self),
            "bytes": sum(self.sizes),
            "unique": len(first_seen),
            "duplicates": identified - len(first_seen),
            "unidentified": unidentified,
            "first_us": min(self.times_us) if self.times_us else None,
            "last_us": max(self.times_us) if self.times_us else None,
        }
        if sent is None:
            return RxStats(**base)
        send_times = sent.send_times()
        delays = [t - send_times[k] for k, t in first_seen.items() if k in send_times]
        lost = len(send_times) - len(delays)
        return RxStats(
            **base,
            sent=len(send_times),
            lost=lost,
            loss_rate=lost / len(send_times) if send_times else 0.0,
            unexpected=len(first_seen) - len(delays),
            latency_us=_latency(delays),
        )


def _latency(delays: list[int]) -> dict[str, float] | None:
    if not delays:
        return None
    arr = np.asarray(delays, dtype=np.float64)
    out = {"min": float(arr.min()), "mean": float(arr.mean())}
    for p, v in zip(LATENCY_PERCENTILES, np.percentile(arr, LATENCY_PERCENTILES)):
        out[f"p{p}"] = float(v)
    out["max"] = float(arr.max())
    return out
