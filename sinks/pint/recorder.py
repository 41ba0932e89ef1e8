"""PINT's recording module: what the sink extracted, split by query and stored.

The sink hands over batches of (flow key, packet id, hop count, digest).
The query-selection hash and the plan say which queries' bit fields each
digest holds; each field goes to its query's store: per-packet maxima as
decoded values, path digests per flow (decoded on demand), dynamic samples
into the (flow, hop) KLL sketches. Bad input is counted and explained and
touches nothing else: a digest for a query the plan does not have (a data
plane on another plan), a flow whose packets disagree on the hop count (a
path change or a rewritten TTL: the digests cannot be attributed to hops).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from common.errors import InvalidValueError

from .dynamic import DEFAULT_K, LatencySketches, sampled_hops
from .engine import Aggregation, ExecutionPlan
from .hashing import GlobalHashes
from .inference import decode_flow
from .pathtrace import MAX_HOPS, PathCoding
from .peeling import PathDecode
from .values import ValueCodec

__all__ = ["FlowProblem", "Recorder"]

_MAX_EXPLANATIONS = 100


@dataclass(frozen=True)
class FlowProblem:
    """A flow the inference refused, and why."""

    flow: int
    reason: str


@dataclass
class _FlowDigests:
    pids: list[np.ndarray] = field(default_factory=list)
    hops: list[np.ndarray] = field(default_factory=list)
    digests: list[np.ndarray] = field(default_factory=list)


class Recorder:
    """Stores one plan's digests; ``paths``/``sketches``/``maxima`` answer queries."""

    def __init__(
        self,
        plan: ExecutionPlan,
        seed: int,
        path_codings: dict[str, PathCoding] | None = None,
        value_codecs: dict[str, ValueCodec] | None = None,
    ) -> None:
        self.plan = plan
        self.seed = seed
        self.selector = GlobalHashes(seed, "query-selection")
        self.path_codings = path_codings or {}
        self.value_codecs = value_codecs or {}
        self.problems: Counter[str] = Counter()
        self.explanations: list[str] = []
        self._flows: dict[str, dict[int, _FlowDigests]] = {}
        self.maxima: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.sketches: dict[str, LatencySketches] = {}
        self._hashes: dict[str, GlobalHashes] = {}
        self._refused: set[tuple[str, int]] = set()
        for query in plan.queries.values():
            needs = (self.path_codings if query.aggregation is Aggregation.STATIC_PER_FLOW
                     else self.value_codecs)
            if query.name not in needs:
                kind = ("a path coding" if query.aggregation is Aggregation.STATIC_PER_FLOW
                        else "a value codec")
                raise InvalidValueError(
                    f"query {query.name!r} ({query.aggregation.value}) needs {kind} at the "
                    "recording module; give it one"
                )

    def hashes(self, query: str) -> GlobalHashes:
        if query not in self._hashes:
            self._hashes[query] = GlobalHashes(self.seed, query)
        return self._hashes[query]

    def _explain(self, kind: str, count: int, message: str) -> None:
        self.problems[kind] += count
        if len(self.explanations) < _MAX_EXPLANATIONS:
            self.explanations.append(message)

    def ingest(
        self, flows: np.ndarray, pids: np.ndarray, hops: np.ndarray, digests: np.ndarray
    ) -> None:
        """Whole digests as the sink removed them from packets."""
        flows, hops = np.asarray(flows, dtype=np.int64), np.asarray(hops, dtype=np.int64)
        digests = np.asarray(digests, dtype=np.uint64)
        pids = np.asarray(pids, dtype=np.uint32)
        set_ids = self.plan.set_ids(self.selector.packet_word(pids, "query"))
        for qset in self.plan.sets:
            sel = set_ids == qset.set_id
            if not sel.any():
                continue
            for placement in qset.placements:
                self.record(
                    placement.query, flows[sel], pids[sel], hops[sel],
                    placement.extract(digests[sel]),
                )

    def record(
        self,
        query: str,
        flows: np.ndarray,
        pids: np.ndarray,
        hops: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """One query's bit fields of a batch of packets."""
        spec = self.plan.queries.get(query)
        if spec is None:
            known = ", ".join(sorted(self.plan.queries))
            self._explain(
                "unknown-query", len(pids),
                f"{len(pids)} digests for query {query!r}, which the plan does not have "
                f"(it has {known}): the data plane runs another plan; install this one",
            )
            return
        flows = np.asarray(flows, dtype=np.int64)
        pids = np.asarray(pids, dtype=np.uint32)
        hops = np.asarray(hops, dtype=np.int64)
        values = np.asarray(values, dtype=np.uint32)
        if spec.aggregation is Aggregation.PER_PACKET:
            decoded = self.value_codecs[query].decode(values)
            self.maxima.setdefault(query, []).append((flows, pids, decoded))
        elif spec.aggregation is Aggregation.STATIC_PER_FLOW:
            store = self._flows.setdefault(query, {})
            order = np.argsort(flows, kind="stable")
            keys, starts = np.unique(flows[order], return_index=True)
            ends = np.append(starts[1:], order.shape[0])
            for key, lo, hi in zip(keys, starts, ends):
                rows = order[lo:hi]
                entry = store.setdefault(int(key), _FlowDigests())
                entry.pids.append(pids[rows])
                entry.hops.append(hops[rows])
                entry.digests.append(values[rows])
        else:
            sketches = self.sketches.get(query)
            if sketches is None:
                sketches = self.sketches[query] = LatencySketches(spec.space_budget or DEFAULT_K)
            hop = sampled_hops(self.hashes(query), pids, hops)
            sketches.update(flows, hop, self.value_codecs[query].decode(values))

    def paths(self, query: str) -> dict[int, PathDecode | FlowProblem]:
        """Every flow's decoded path for a path-tracing query."""
        spec = self.plan.queries.get(query)
        if spec is None or spec.aggregation is not Aggregation.STATIC_PER_FLOW:
            raise InvalidValueError(f"{query!r} is not a path-tracing query of this plan")
        coding = self.path_codings[query]
        space = self.plan.queries[query].space_budget
        out: dict[int, PathDecode | FlowProblem] = {}
        for flow, entry in self._flows.get(query, {}).items():
            hops = np.concatenate(entry.hops)
            counts = np.unique(hops)
            reason = None
            if counts.shape[0] > 1:
                shown = ", ".join(str(int(c)) for c in counts[:5])
                reason = (
                    f"flow {flow}: its {hops.shape[0]} packets carry hop counts {shown}; the "
                    "path changed or the TTL was rewritten, so digests cannot be attributed "
                    "to hops; not decoded"
                )
            elif not 1 <= counts[0] <= MAX_HOPS:
                reason = (
                    f"flow {flow}: hop count {int(counts[0])} is outside 1..{MAX_HOPS}; "
                    "check the sink's initial-TTL setting; not decoded"
                )
            if reason is not None:
                if (query, flow) not in self._refused:
                    self._refused.add((query, flow))
                    self._explain("bad-flow", 1, reason)
                out[flow] = FlowProblem(flow, reason)
                continue
            out[flow] = decode_flow(
                coding, self.hashes(query), np.concatenate(entry.pids), int(counts[0]),
                np.concatenate(entry.digests), space,
            )
        return out
