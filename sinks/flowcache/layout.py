"""Numbering shared by the flow cache's arrays, rings and events.

Metrics are indexed the way a hop's values are stored: column 0 is the
switch id, 1-3 the three measured metrics. Thresholds and histograms cover
only the measured ones, and the end-to-end latency is a fourth threshold
metric, so event detection indexes thresholds by ``metric - 1``.
"""

from __future__ import annotations

SWITCH_ID = 0
HOP_LATENCY = 1
QUEUE_OCCUPANCY = 2
LINK_UTILIZATION = 3
METRICS = ("switch_id", "hop_latency", "queue_occupancy", "link_utilization")
"""Per-hop value columns, in storage order."""
PARSER_FIELDS = ("node_id", "hop_latency", "queue_occupancy", "egress_tx_util")
"""The INT parser's per-hop field for each column of METRICS."""
MEASURED = METRICS[1:]
"""Metrics with thresholds and histograms (a switch id is not a measurement)."""

# Threshold table: thresholds[CLASS, metric], metric 0-2 = MEASURED, 3 = end-to-end latency.
CHANGE = 0  # C: |current - previous| > threshold
THRESHOLD = 1  # T: current > threshold
CLASSES = ("change", "threshold")
THRESHOLD_METRICS = (*MEASURED, "e2e_latency")
E2E = 3
DISABLED = (1 << 63) - 1
"""A threshold no value exceeds: the event is off."""

# Event-type bitmap of an event-ring entry.
T_HOP_LATENCY = 1 << 0
T_QUEUE_OCCUPANCY = 1 << 1
T_LINK_UTILIZATION = 1 << 2
C_HOP_LATENCY = 1 << 3
C_QUEUE_OCCUPANCY = 1 << 4
C_LINK_UTILIZATION = 1 << 5
T_E2E_LATENCY = 1 << 6
C_E2E_LATENCY = 1 << 7
PATH_CHANGE = 1 << 8
ALL_EVENTS = (1 << 9) - 1
EVENT_BITS = {
    "t_hop_latency": T_HOP_LATENCY, "t_queue_occupancy": T_QUEUE_OCCUPANCY,
    "t_link_utilization": T_LINK_UTILIZATION, "c_hop_latency": C_HOP_LATENCY,
    "c_queue_occupancy": C_QUEUE_OCCUPANCY, "c_link_utilization": C_LINK_UTILIZATION,
    "t_e2e_latency": T_E2E_LATENCY, "c_e2e_latency": C_E2E_LATENCY, "path_change": PATH_CHANGE,
}
WHOLE_PATH = 0xFFFF_FFFF
"""Switch id of an end-to-end latency event: it belongs to no one switch."""
E2E_HOP = 255
"""Hop index of an end-to-end latency event."""

# Why a bucket went to a general ring.
EVICT_COLLISION = 1  # its row was full and a new flow needed the least recently updated bucket
EVICT_AGED = 2  # idle longer than the aging period
EVICT_FLUSH = 3  # exported on request (end of a run)
EVICT_REASONS = {EVICT_COLLISION: "collision", EVICT_AGED: "aged", EVICT_FLUSH: "flush"}

# Bucket flags.
FLAG_E2E = 1  # the last packet carried hop latency: e2e_latest holds its sum
FLAG_PATH = 2  # the last packet carried switch ids: latest[:, :, SWITCH_ID] is its path

KEY_VALID = 1 << 63
"""Set in key1 of an occupied bucket; a free bucket's key1 is 0."""
UNKNOWN_SWITCH = 1 << 32
"""Histogram key base for hops without a switch id: UNKNOWN_SWITCH | hop index."""

# Counters, indexes into FlowCache.counters.
COUNTERS = ("packets", "hits", "inserts", "evicted_collision", "evicted_aged", "evicted_flush",
            "general_ring_overflow", "events", "event_ring_overflow", "histogram_switch_overflow",
            "aging_sweeps")
C_PACKETS, C_HITS, C_INSERTS, C_EVICT_COLLISION, C_EVICT_AGED, C_EVICT_FLUSH, \
    C_G_OVERFLOW, C_EVENTS, C_E_OVERFLOW, C_HIST_OVERFLOW, C_SWEEPS = range(len(COUNTERS))
