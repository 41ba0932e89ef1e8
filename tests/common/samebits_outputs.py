"""The outputs that tests compare byte for byte, as digests in one JSON line.

``test_samebits.py`` makes them in its own process (numpy's kernels for
this CPU) and by running this file in a child process with numpy held to
its baseline kernels; the two must be equal. The quick runs' digests are
recorded in ``QUICK_METRICS`` too: a deliberate change of an experiment's
results updates them in the same commit, with the reason
(``python tests/common/samebits_outputs.py`` prints the new ones). The
sim's runs are timed by its default switch model (``bmv2``); the PINT
experiments name ``ideal`` themselves.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS.parent) not in sys.path:
    sys.path.insert(0, str(TESTS.parent))

QUICK_METRICS = {
    "gpint-fig10":
        "40146d20a2dd0372420c585742335ccc7541609cdff8637c608595f88bc78617",
    "intcollector-fig9":
        "c0384fe070c57dc32bace6284be82395e9e407bad5f56ea66a998df116e0ce9b",
    "intcollector-storage":
        "ff171da39c5b7f6bb14ab1bf82e5a35693ec3c30b42706aba3e6be34b0950493",
    "intlabel-fig9":
        "d46ed40069fd65d40367b4e1da27bdaf21f56ea1031f13ba1a341cf00af4b6d9",
    "intlabel-fig12":
        "da7b4d22740a2322b76993fea223eaf3693520b0889d0fbd9b198d0be19d4f24",
    "intlabel-fig14":
        "20e96308596ef2c08933dbb8c56227cb7144cd5c03d0f16c6bef1784a98b91ad",
    "intlabel-fig17":
        "155d55c089fc00a9266da73ccd41b5f9bb3a572498431cf2d28895a1ba2779bf",
    "intlabel-fig21":
        "38457e2d08075fdce50b4f528b7febe93c325914a75fd0ea7d42c5150936b04c",
    "intlabel-fig22":
        "ce7f4712f0993ca374253402368196293280fa84bb37704d62e1ad77bf012267",
    "pint-cc":
        "15a4b3c49fdf77d46a7691a112752c4da34e310f092f2132b31de163a016287f",
    "pint-path-tracing":
        "c824cc23c55519ebb27233e8c0b233f22dcb66b91e7b36c446816678b9b4a61d",
    "pint-path-tracing-net":
        "da31e9ae87fba86248677101512a73a000cd5395f0f32601097f4163e680a2a3",
}
"""sha256 of metrics.csv of ``intbed run NAME --quick`` (seed 0): experiments
whose numbers go through the float math of ``common.samebits``'s callers
(PINT's levels and analysis, the INT-label theory, the collector's series)
or through the sim (GPINT, INT-label's and PINT's runs on the sim target).
Not here: the experiments that measure CPU time (intcollector-fig10/11,
flowcache-fig3/4/5) and pint-quantiles, whose KLL sketches draw their
compaction coins from a generator the library seeds from the clock."""


def _load(path: Path) -> ModuleType:
    if f"_samebits_{path.stem}" in sys.modules:
        return sys.modules[f"_samebits_{path.stem}"]
    spec = importlib.util.spec_from_file_location(f"_samebits_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def numpy_dispatch() -> list[str]:
    """numpy's dispatch targets beyond its baseline that are switched on here."""
    from numpy._core._multiarray_umath import (  # type: ignore[attr-defined]
        __cpu_baseline__,
        __cpu_dispatch__,
        __cpu_features__,
    )
    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f) and f not in __cpu_baseline__]


def pint_outputs() -> dict[str, str]:
    """The generated PINT STF files and the level tables of a few codecs."""
    from controller.pint.p4config import level_entries
    from sinks.pint.analysis import online_expected, reservoir_expected
    from sinks.pint.values import ValueCodec

    stf = _load(TESTS / "pint" / "test_pint_p4_stf.py")
    out = {f"stf {name}": sha(make()) for name, make in sorted(stf.GENERATORS.items())}
    for bits, lo, hi in ((8, 1.0, 1e6), (10, 0.5, 2e5), (9, 2.0, 5e4)):
        out[f"levels {bits} {lo} {hi}"] = sha(repr(level_entries(ValueCodec(bits, lo, hi))))
    expectations = [online_expected(k, 0.5, 0.3, f) for k in (5, 9) for f in (1, 2, 4)]
    out["pint expectations"] = sha(repr([*expectations, reservoir_expected(9, 2)]))
    return out


def golden_trace() -> str:
    """The golden trace's digest under every switch model it records (the
    measured models draw their times through numpy: the same bits here
    and with the baseline kernels)."""
    module = _load(TESTS / "sim" / "test_golden_trace.py")
    return json.dumps({model: module.traced_run(model)[0] for model in module.GOLDEN},
                      sort_keys=True)


def golden() -> str:
    return json.dumps(_load(TESTS / "sim" / "test_golden_trace.py").GOLDEN, sort_keys=True)


def quick_metrics() -> dict[str, str]:
    from experiments.framework import run_experiment

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in QUICK_METRICS:
            run = run_experiment(name, quick=True, out=Path(tmp) / name, jobs=1)
            out[name] = sha((run / "metrics.csv").read_bytes())
    return out


def all_outputs() -> dict[str, Any]:
    return {"numpy dispatch": numpy_dispatch(), **pint_outputs(),
            "golden trace": golden_trace(), "quick metrics": quick_metrics()}


if __name__ == "__main__":
    print(json.dumps(all_outputs(), sort_keys=True))
