"""Values that become table entries, generated files or compared digests
are the same bits on every machine (``common.samebits``).

Three guards: the helpers against Python's scalar reference; a scan of the
project's source for numpy calls whose kernel numpy picks by CPU (each use
either goes through ``common.samebits`` or is listed below with the reason
its result is never compared byte for byte); and the byte-compared outputs
themselves (``samebits_outputs.py``) made once with numpy's kernels for
this CPU and once in a child process with numpy held to its baseline.
"""

from __future__ import annotations

import ast
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from common import samebits
from common.paths import child_env
from tests.test_layers import PACKAGES

sys.path.insert(0, str(Path(__file__).resolve().parent))
import samebits_outputs as outputs  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

JUSTIFIED = {
    ("experiments/intcollector/cpu_figures.py", "polyfit"):
        "fits C = a R + b to measured CPU seconds, which differ from run to run anyway",
    ("experiments/intlabel/collector_cost.py", "linalg"):
        "fits the live collector's measured busy seconds, which differ from run to run",
    ("experiments/intlabel/collector_cost.py", "@"):
        "the residuals of that fit (its R^2), of the same measured seconds",
}
"""(file, call) uses of a CPU-dependent numpy routine that stay, and why."""

CPU_DEPENDENT = samebits.DISPATCHED_UFUNCS | {"polyfit", "lstsq", "linalg"}


def uses_in(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each numpy call or ``@`` in ``tree`` whose result may
    depend on the CPU: ``np.NAME`` for the names above, ``x @ y``, ``x.dot(y)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append((node.lineno, "@"))
        elif isinstance(node, ast.Attribute) and node.attr in CPU_DEPENDENT:
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner in ("np", "numpy"):
                found.append((node.lineno, node.attr))
            elif node.attr == "dot" and owner != "samebits":
                found.append((node.lineno, "dot"))
    return found


def cpu_dependent_uses() -> list[tuple[str, int, str]]:
    """(file, line, what) of every such use in the project's packages,
    outside common/samebits.py."""
    found = []
    for package in sorted(PACKAGES):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            rel = path.relative_to(REPO_ROOT).as_posix()
            if rel != "common/samebits.py":
                tree = ast.parse(path.read_text(), filename=rel)
                found += [(rel, line, what) for line, what in uses_in(tree)]
    return found


def test_no_cpu_dependent_numpy_call_outside_samebits() -> None:
    uses = cpu_dependent_uses()
    left = [f"{f}:{line}: {what}" for f, line, what in uses if (f, what) not in JUSTIFIED]
    assert left == [], ("numpy picks these kernels by CPU; use common.samebits, or say in "
                        "JUSTIFIED why the result is never compared byte for byte:\n"
                        + "\n".join(left))
    used = {(f, what) for f, _line, what in uses}
    assert set(JUSTIFIED) <= used, f"stale entries: {set(JUSTIFIED) - used}"


def test_the_scan_finds_each_shape() -> None:
    code = ("import numpy as np\na = np.exp(x)\nb = m @ v\nc = m.dot(v)\nd = np.sqrt(x)\n"
            "e = samebits.dot(m, v)\nf = numpy.linalg.solve(m, v)\ng = np.log1p(x)\n")
    assert sorted(uses_in(ast.parse(code))) == [
        (2, "exp"), (3, "@"), (4, "dot"), (7, "linalg"), (8, "log1p")]


def test_helpers_agree_with_pythons_scalar_functions() -> None:
    rng = random.Random(7)
    xs = [rng.uniform(-700.0, 700.0) for _ in range(2000)]
    ps = [rng.uniform(1e-300, 1e300) for _ in range(2000)] + [1.0, 2.0, 0.5]
    assert samebits.exp(np.array(xs)).tolist() == [math.exp(x) for x in xs]
    assert samebits.log(np.array(ps)).tolist() == [math.log(p) for p in ps]
    assert samebits.log1p(np.array(ps)).tolist() == [math.log1p(p) for p in ps]
    bases = np.array(ps[:50]).reshape(5, 10)
    assert samebits.power(bases, 0.37).tolist() == [
        [math.pow(b, 0.37) for b in row] for row in bases.tolist()]
    assert samebits.power(0.5, np.arange(4.0)).tolist() == [1.0, 0.5, 0.25, 0.125]
    grid = samebits.exp(np.zeros((3, 4)))
    assert grid.shape == (3, 4) and (grid == 1.0).all()


def test_dot_sums_in_a_fixed_order() -> None:
    rng = np.random.default_rng(3)
    m, v = rng.uniform(-1, 1, (7, 1000)), rng.uniform(-1, 1, 1000)
    rows = samebits.dot(m, v)
    assert isinstance(rows, np.ndarray) and rows.shape == (7,)
    for i in range(7):
        assert rows[i] == (m[i] * v).sum()  # numpy's pairwise sum, bit for bit
        assert abs(rows[i] - math.fsum((m[i] * v).tolist())) < 1e-12
    assert samebits.dot(v, v) == float((v * v).sum())
    with pytest.raises(ValueError, match="dot needs"):
        samebits.dot(m, m)


def test_bit_length_is_exact_over_64_bits() -> None:
    rng = random.Random(1)
    xs = [0, 1, 2, 3, 2**32 - 1, 2**32, 2**53 - 1, 2**53, 2**53 + 1, 2**63, 2**64 - 1]
    xs += [rng.getrandbits(rng.randint(0, 64)) for _ in range(20000)]
    got = samebits.bit_length(np.array(xs, dtype=np.uint64)).tolist()
    assert got == [x.bit_length() for x in xs]
    assert samebits.bit_length(np.array([0, 5, 2**40], dtype=np.int64)).tolist() == [0, 3, 41]
    with pytest.raises(ValueError, match="non-negative"):
        samebits.bit_length(np.array([-1]))
    with pytest.raises(ValueError, match="integers"):
        samebits.bit_length(np.array([1.5]))


def baseline_env() -> dict[str, str]:
    """The environment that holds numpy to its baseline kernels: every
    dispatch target this CPU has switched off (X86_V3, X86_V4 and the
    AVX-512 groups on x86-64)."""
    from numpy._core._multiarray_umath import (  # type: ignore[attr-defined]
        __cpu_baseline__,
        __cpu_dispatch__,
        __cpu_features__,
    )
    off = [f for f in __cpu_dispatch__ if __cpu_features__.get(f) and f not in __cpu_baseline__]
    return {"NPY_DISABLE_CPU_FEATURES": " ".join(off)} if off else {}


def outputs_in_child(extra: dict[str, str]) -> dict[str, Any]:
    env = child_env(extra)
    proc = subprocess.run([sys.executable, str(HERE / "samebits_outputs.py")],
                          capture_output=True, text=True, check=False, env=env,
                          cwd=REPO_ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def here() -> dict[str, Any]:
    """The outputs made in this process, with numpy's kernels for this CPU."""
    return outputs.all_outputs()


def test_byte_compared_outputs_are_what_was_recorded(here: dict[str, Any]) -> None:
    assert here["golden trace"] == outputs.golden()
    changed = {name: digest for name, digest in here["quick metrics"].items()
               if digest != outputs.QUICK_METRICS[name]}
    assert changed == {}, ("quick metrics.csv changed; a deliberate change updates "
                           f"QUICK_METRICS in samebits_outputs.py: {changed}")
    assert set(here["quick metrics"]) == set(outputs.QUICK_METRICS)


@pytest.mark.skipif(not baseline_env(), reason="numpy dispatches no kernel beyond its "
                    "baseline on this CPU, so there is no second kernel to compare with")
def test_byte_compared_outputs_are_the_same_with_baseline_kernels(
        here: dict[str, Any]) -> None:
    there = outputs_in_child(baseline_env())
    assert here["numpy dispatch"] and there["numpy dispatch"] == [], (
        "the child did not hold numpy to its baseline", here["numpy dispatch"],
        there["numpy dispatch"])
    assert set(here) == set(there)
    differ = sorted(key for key in here if key != "numpy dispatch" and here[key] != there[key])
    assert differ == [], f"these differ between numpy's kernels: {differ}"
