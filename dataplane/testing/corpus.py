"""A front-end corpus in p4c's layout: programs p4c accepts
(``p4_16_samples/``) must compile, programs it rejects
(``p4_16_errors/``, ``p4_16_bmv_errors/``) must be rejected with a located
error, and nothing may end in a Python traceback.

Each program is compiled in a worker process with a time limit, so one
that hangs or crashes the interpreter is reported, not fatal.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import P4UnsupportedError

ACCEPTED = "p4_16_samples"
REJECTED = ("p4_16_errors", "p4_16_bmv_errors")
# Files other programs include; p4c does not compile them on their own.
INCLUDED_ONLY = {"arith-skeleton.p4", "arith-inline-skeleton.p4", "ml-headers.p4"}


@dataclass(frozen=True, slots=True)
class CorpusCase:
    path: Path
    expect: str  # "accept" or "reject"

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}"


@dataclass(frozen=True, slots=True)
class CorpusOutcome:
    case: CorpusCase
    status: str  # compiled, rejected, unsupported, crashed
    message: str

    @property
    def passed(self) -> bool:
        if self.case.expect == "accept":
            return self.status == "compiled"
        return self.status in ("rejected", "unsupported")


@dataclass
class CorpusReport:
    outcomes: list[CorpusOutcome] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed

    def count(self, status: str, expect: str | None = None) -> int:
        return sum(o.status == status and (expect is None or o.case.expect == expect)
                   for o in self.outcomes)


def find_cases(root: Path) -> list[CorpusCase]:
    cases = []
    for folder, expect in ((ACCEPTED, "accept"), *((f, "reject") for f in REJECTED)):
        for p in sorted((root / folder).glob("*.p4")):
            if p.name not in INCLUDED_ONLY:
                cases.append(CorpusCase(p, expect))
    return cases


def check_program(path: Path) -> tuple[str, str]:
    """(status, message) of compiling one program; never raises."""
    from common.errors import IntbedError
    from dataplane.compiler.pipeline import compile_file

    try:
        compile_file(path)
    except P4UnsupportedError as exc:
        return "unsupported", exc.line()
    except IntbedError as exc:
        return "rejected", exc.line()
    except RecursionError:
        return "crashed", "internal error: recursion too deep"
    except Exception as exc:  # noqa: BLE001 - the point is to report any crash
        return "crashed", f"internal error: {type(exc).__name__}: {exc}"
    return "compiled", "ok"


def _check(case: CorpusCase) -> CorpusOutcome:
    status, message = check_program(case.path)
    return CorpusOutcome(case, status, message)


def run_corpus(root: Path, jobs: int = 1, timeout_s: float = 120.0,
               progress: Callable[[CorpusOutcome], None] | None = None) -> CorpusReport:
    cases = find_cases(root)
    report = CorpusReport()
    t0 = time.perf_counter()
    for outcome in _outcomes(cases, jobs, timeout_s):
        report.outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    report.wall_s = time.perf_counter() - t0
    return report


def _outcomes(cases: list[CorpusCase], jobs: int, timeout_s: float) -> Iterator[CorpusOutcome]:
    # Fresh workers per few programs would cost more than the compiles; a
    # worker that dies or hangs is replaced and its program reported.
    ctx = multiprocessing.get_context("fork")
    pending = list(cases)
    while pending:
        with ProcessPoolExecutor(max(1, jobs), mp_context=ctx) as pool:
            futures = [(c, pool.submit(_check, c)) for c in pending]
            pending = []
            broken = False
            for case, fut in futures:
                if broken:
                    pending.append(case)
                    continue
                try:
                    yield fut.result(timeout=timeout_s)
                except TimeoutError:
                    yield CorpusOutcome(case, "crashed",
                                        f"internal error: no result in {timeout_s:g} s")
                    broken = True
                except Exception as exc:  # noqa: BLE001 - a dead worker
                    yield CorpusOutcome(case, "crashed", f"internal error: worker died ({exc})")
                    broken = True
            if broken:
                for p in multiprocessing.active_children():
                    p.kill()
