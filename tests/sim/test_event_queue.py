"""The event loop's order against a reference model: events run by time,
ties in the order they were scheduled, whatever the queue's layout and
whether an event is a callable or a target's (``push_to``).

Compiled, the Simulator's queue is ``heap4.EventHeap``, a four-ary heap
over arrays; in Python it is the reference ``events.EventQueue``, ``heapq``
over tuples; the same script runs in this process
(compiled where built) and in a child with ``INTBED_PURE_PYTHON=1``, and
both must match the model."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from common.paths import child_env
from fastpath import loader

_SCRIPT = """
import json, random
from fastpath import loader
from dataplane.targets.sim.events import Simulator, Target

class Relay(Target):
    # A Python target: the compiled loop finds this fire in place of its
    # base's, as it does a sim switch's in C.
    def __init__(self, fn):
        self.fn = fn

    def fire(self, kind, arg):
        assert kind == 7
        self.fn(*arg)

def trace(seed):
    rng = random.Random(seed)
    sim = Simulator()
    ran = []
    expected = []   # (when, order, label) of every event scheduled
    order = [0]

    def event(label, depth):
        ran.append((sim.now_ns, label))
        # Events schedule more events, some at the current instant, some
        # in a burst at one shared time (ties), some far ahead.
        for k in range(rng.choice((0, 0, 1, 2, 3)) if depth < 6 else 0):
            delay = rng.choice((0, 0, 5, 5, rng.randrange(1, 10**6), 10**9 + rng.randrange(9)))
            schedule(sim.now_ns + delay, f"{label}.{k}", depth + 1)

    relay = Relay(event)

    def schedule(when, label, depth):
        expected.append((when, order[0], label))
        order[0] += 1
        if rng.random() < 0.5:  # a target event, in turn with the others
            sim.push_to(when, relay, 7, (label, depth))
        else:
            sim.at_ns(when, event, label, depth)

    for i in range(400):   # far more than the first capacity: the heap grows
        schedule(rng.choice((0, 7, 7, rng.randrange(10**7))), str(i), 0)
    pending = sim.pending()
    first = sim.run(until_ns=10**6)
    rest = sim.run()
    return {"ran": ran, "expected": sorted(expected), "pending": pending,
            "counts": [first, rest, sim.events_run], "left": sim.pending()}

print(json.dumps({"compiled": loader.loaded().get("dataplane.targets.sim.events"),
                  "traces": [trace(s) for s in range(5)]}))
"""


def _run(**env: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                          env=child_env(env), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check(result: dict) -> None:
    for t in result["traces"]:
        assert t["pending"] == 400
        assert t["left"] == 0
        first, rest, total = t["counts"]
        assert first + rest == total == len(t["expected"])
        # The model: every scheduled event, run in (time, scheduling order).
        assert [label for _, label in t["ran"]] == [label for _, _, label in t["expected"]]
        assert [when for when, _ in t["ran"]] == [when for when, _, _ in t["expected"]]


def test_pure_python_queue_matches_the_model() -> None:
    result = _run(**{loader.PURE_ENV: "1"})
    assert result["compiled"] == "python"
    _check(result)


def test_compiled_queue_matches_the_model_and_python() -> None:
    result = _run()
    if result["compiled"] != "compiled":
        why = "the compiled event loop is not built (intbed accel build)"
        if os.environ.get("INTBED_REQUIRE_ACCEL"):
            pytest.fail(why)
        pytest.skip(why)
    _check(result)
    assert result == {**_run(**{loader.PURE_ENV: "1"}), "compiled": "compiled"}


def test_stop_and_clamping_keep_the_order() -> None:
    from dataplane.targets.sim.events import Simulator

    sim = Simulator()
    seen: list[tuple[int, str]] = []
    sim.at_ns(50, lambda: (seen.append((sim.now_ns, "a")), sim.stop()))
    sim.at_ns(50, lambda: seen.append((sim.now_ns, "b")))
    assert sim.run() == 1 and sim.pending() == 1
    sim.at_ns(10, lambda: seen.append((sim.now_ns, "late")))  # in the past: runs now
    sim.after_ns(0, lambda: seen.append((sim.now_ns, "c")))
    sim.run()
    assert seen == [(50, "a"), (50, "b"), (50, "late"), (50, "c")]
    rng = random.Random(1)
    for _ in range(200):
        sim.after_ns(rng.randrange(100), lambda: None)
    assert sim.run(until_ns=10) + sim.run() == 200 and sim.pending() == 0


def test_a_run_events_callback_and_arguments_are_freed_and_waiting_ones_kept() -> None:
    """The compiled queue stores callbacks and arguments into its lists'
    item pointers itself: each reference taken is given back once the
    event has run, and a waiting event's are held until it runs."""
    import gc
    import weakref

    from dataplane.targets.sim.events import Simulator

    class Payload:
        pass

    sim = Simulator()
    ran: list[int] = []
    refs = []
    for i in range(300):   # past the first capacity: the lists grow
        payload = Payload()
        refs.append(weakref.ref(payload))
        sim.at_ns(i, lambda p, i=i: ran.append(i), payload)
    del payload
    gc.collect()
    assert all(r() is not None for r in refs)   # waiting: held by the queue
    sim.run(until_ns=149)
    assert ran == list(range(150))
    assert [r() is None for r in refs] == [True] * 150 + [False] * 150
    sim.run()
    assert all(r() is None for r in refs) and sim.pending() == 0


def test_the_compiled_heaps_packing_constants() -> None:
    """Compiled, they are machine words (heap4.pxd) that Python cannot
    read: the module's Python source, loaded in a child with the fast path
    off, must give the mask and limit their bit count says."""
    script = ("from dataplane.targets.sim import heap4 as e; "
              "print(e._SLOT_MASK == (1 << e._SLOT_BITS) - 1, "
              "e._ORDER_LIMIT == 1 << (63 - e._SLOT_BITS))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=child_env({loader.PURE_ENV: "1"}), check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True"]
