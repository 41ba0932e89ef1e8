"""A plain-Python flow cache written from docs/flowcache.md, to check the
compiled one against: rows are lists of dict buckets, rings are lists,
histograms are dicts of lists. Slow and obvious on purpose."""

from __future__ import annotations

from dataclasses import dataclass, field

MASK64 = (1 << 64) - 1
NO_SWITCH = 0xFFFF_FFFF
E2E_HOP = 255
METRIC_NAMES = ("hop_latency", "queue_occupancy", "link_utilization")


def splitmix_finish(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def row_and_shard(key0: int, key1: int, rows: int, shards: int) -> tuple[int, int]:
    h = splitmix_finish(key0 ^ splitmix_finish(key1))
    return (h // shards) % rows, h % shards


def path_digest(switches: list[int]) -> int:
    d = 0xCBF29CE484222325
    for s in switches:
        d = ((d ^ s) * 0x100000001B3) & MASK64
    return d


@dataclass
class RefSettings:
    rows: int
    buckets: int
    max_hops: int
    rings: int
    ring_entries: int
    aging_period: int = 0
    aging_interval: int = 1
    # (class, metric) -> threshold; class "change"/"threshold", metric as in THRESHOLD_METRICS
    thresholds: dict[tuple[str, str], int] = field(default_factory=dict)
    enabled: frozenset[str] | None = None
    edges: dict[str, list[int]] = field(default_factory=dict)
    max_switches: int = 1024


class RefCache:
    def __init__(self, s: RefSettings) -> None:
        self.s = s
        self.table: list[list[dict | None]] = [[None] * s.buckets for _ in range(s.rows)]
        self.general: list[list[tuple]] = [[] for _ in range(s.rings)]
        self.events: list[list[tuple]] = [[] for _ in range(s.rings)]
        self.counts = {k: 0 for k in ("packets", "hits", "inserts", "evicted_collision",
                                      "evicted_aged", "general_ring_overflow", "events",
                                      "event_ring_overflow", "histogram_switch_overflow")}
        self.hist: dict[int, list[list[int]]] = {}
        self.next_due: int | None = None

    # --- helpers
    def on(self, name: str) -> bool:
        return self.s.enabled is None or name in self.s.enabled

    def limit(self, cls: str, metric: str) -> int | None:
        return self.s.thresholds.get((cls, metric))

    def evict(self, row: int, b: int, reason: int, now: int) -> None:
        e = self.table[row][b]
        assert e is not None
        self.counts["evicted_collision" if reason == 1 else "evicted_aged"] += 1
        ring = self.general[row % self.s.rings]
        if len(ring) >= self.s.ring_entries:
            self.counts["general_ring_overflow"] += 1
        else:
            ring.append((e["key"], e["count"], e["last"], e["hops"], reason, now,
                         dict(e["latest"]), dict(e["sums"]), dict(e["n"])))
        self.table[row][b] = None

    def emit(self, row: int, key: tuple[int, int], switch: int, hop: int, value: int,
             bits: int, ts: int) -> None:
        self.counts["events"] += 1
        ring = self.events[row % self.s.rings]
        if len(ring) >= self.s.ring_entries:
            self.counts["event_ring_overflow"] += 1
        else:
            ring.append((key[0], key[1], switch, hop, value, bits, ts))

    def sweep(self, now: int) -> None:
        for row in range(self.s.rows):
            for b in range(self.s.buckets):
                e = self.table[row][b]
                if e is not None and now - e["last"] > self.s.aging_period:
                    self.evict(row, b, 2, now)

    def bin_of(self, metric: str, v: int) -> int:
        edges = self.s.edges[metric]
        index = 0
        for i, lower in enumerate(edges):
            if lower <= v:
                index = i
        return index

    def hist_add(self, key: int, values: dict[str, int]) -> None:
        if key not in self.hist:
            if len(self.hist) >= self.s.max_switches:
                self.counts["histogram_switch_overflow"] += 1
                return
            self.hist[key] = [[0] * len(self.s.edges[m]) for m in METRIC_NAMES]
        for i, m in enumerate(METRIC_NAMES):
            if m in values:
                self.hist[key][i][self.bin_of(m, values[m])] += 1

    # --- one packet: hops is a list of dicts with some of switch/hop_latency/... (source first)
    def packet(self, key: tuple[int, int], ts: int, hops: list[dict[str, int]],
               carried: set[str]) -> None:
        s = self.s
        if s.aging_period:
            if self.next_due is None:
                self.next_due = ts + s.aging_interval
            elif ts >= self.next_due:
                self.sweep(ts)
                self.next_due = ts + s.aging_interval
        row, _ = row_and_shard(key[0], key[1], s.rows, 1)
        self.counts["packets"] += 1
        buckets = self.table[row]
        where = next((b for b, e in enumerate(buckets) if e is not None and e["key"] == key),
                     None)
        if where is not None:
            self.counts["hits"] += 1
        else:
            free = [b for b, e in enumerate(buckets) if e is None]
            if free:
                where = free[0]
            else:
                where = min(range(s.buckets), key=lambda b: (buckets[b]["last"], b))
                self.evict(row, where, 1, ts)
            self.counts["inserts"] += 1
            buckets[where] = {"key": key, "count": 0, "last": ts, "hops": 0, "latest": {},
                              "sums": {}, "n": {}, "e2e": None, "path": None}
        e = buckets[where]
        prev_hops = e["hops"]
        prev_path = e["path"]
        has_ids = "switch" in carried
        path = [hop["switch"] for hop in hops] if has_ids else None
        for h, hop in enumerate(hops):
            switch = hop["switch"] if has_ids else NO_SWITCH
            comparable = h < prev_hops and (prev_path is None or not has_ids
                                            or prev_path[h] == switch)
            for i, m in enumerate(METRIC_NAMES):
                if m not in carried:
                    continue
                v = hop[m]
                bits = 0
                t = self.limit("threshold", m)
                if t is not None and v > t and self.on("t_" + m):
                    bits |= 1 << i
                c = self.limit("change", m)
                if c is not None and comparable and (h, m) in e["latest"] and \
                        abs(v - e["latest"][(h, m)]) > c and self.on("c_" + m):
                    bits |= 1 << (3 + i)
                if bits:
                    self.emit(row, key, switch, h, v, bits, ts)
        if "hop_latency" in carried:
            total = sum(hop["hop_latency"] for hop in hops)
            bits = 0
            t = self.limit("threshold", "e2e_latency")
            if t is not None and total > t and self.on("t_e2e_latency"):
                bits |= 1 << 6
            c = self.limit("change", "e2e_latency")
            if c is not None and e["e2e"] is not None and abs(total - e["e2e"]) > c and \
                    self.on("c_e2e_latency"):
                bits |= 1 << 7
            if bits:
                self.emit(row, key, NO_SWITCH, E2E_HOP, total, bits, ts)
        if has_ids and prev_path is not None and path != prev_path and self.on("path_change"):
            first = next((h for h in range(min(len(path), len(prev_path)))
                          if path[h] != prev_path[h]), min(len(path), len(prev_path)))
            switch = path[first] if first < len(path) else NO_SWITCH
            self.emit(row, key, switch, first, path_digest(path), 1 << 8, ts)
        # values, after the events that compare against the old ones
        e["count"] += 1
        e["last"] = ts
        e["hops"] = len(hops)
        e["path"] = path
        e["e2e"] = sum(hop["hop_latency"] for hop in hops) if "hop_latency" in carried else None
        for h, hop in enumerate(hops):
            for m in ("switch", *METRIC_NAMES):
                if m in carried:
                    e["latest"][(h, m)] = hop[m]
                    e["sums"][(h, m)] = e["sums"].get((h, m), 0) + hop[m]
                    e["n"][(h, m)] = e["n"].get((h, m), 0) + 1
            key_h = hop["switch"] if has_ids else (1 << 32) | h
            self.hist_add(key_h, {m: hop[m] for m in METRIC_NAMES if m in carried})

    def drain_general(self) -> list[tuple]:
        out = [(r, *item) for r, ring in enumerate(self.general) for item in ring]
        self.general = [[] for _ in range(self.s.rings)]
        return out

    def drain_events(self) -> list[tuple]:
        out = [(r, *item) for r, ring in enumerate(self.events) for item in ring]
        self.events = [[] for _ in range(self.s.rings)]
        return out
