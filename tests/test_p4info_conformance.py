"""P4Info of every p4c sample, compiled by intbed, against the file p4c wrote for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from dataplane.compiler.p4info import build_p4info, compare_p4info, load_text, score

compiler = pytest.importorskip(
    "dataplane.compiler.pipeline", reason="dataplane.compiler.pipeline (the P4 front end) is not in this tree"
)

REQUIRED = 0.90  # share of P4Info facts (names, fields, widths, references) that must agree
SHOWN = 12  # mismatch lines printed per sample


@dataclass(slots=True)
class Outcome:
    sample: str
    matching: int
    total: int
    lines: list[str]
    id_lines: list[str]


def _check(samples: Path, path: Path) -> Outcome:
    sample = path.name.removesuffix(".p4info.txtpb")
    theirs = load_text(path)
    try:
        program = compiler.compile_file(samples / f"{sample}.p4", include_dirs=(samples,))
        ours = build_p4info(program.schema)
    except Exception as exc:  # one sample's failure is a measured miss, not a crash
        total = score(theirs, theirs)[1]
        return Outcome(sample, 0, total, [f"not compiled: {type(exc).__name__}: {exc}"], [])
    matching, total = score(ours, theirs)
    lines = compare_p4info(ours, theirs)
    id_lines = [ln for ln in compare_p4info(ours, theirs, ids=True) if ln not in lines]
    return Outcome(sample, matching, total, lines, id_lines)


def _report(outcomes: list[Outcome]) -> str:
    out = []
    for o in outcomes:
        if o.lines or o.id_lines:
            out.append(f"{o.sample}: {o.matching}/{o.total}")
            out.extend(f"    {ln}" for ln in (o.lines + o.id_lines)[:SHOWN])
            hidden = len(o.lines) + len(o.id_lines) - SHOWN
            if hidden > 0:
                out.append(f"    ... {hidden} more")
    return "\n".join(out)


def test_p4info_of_every_sample_matches_p4c(samples_dir: Path) -> None:
    files = sorted(samples_dir.glob("*.p4info.txtpb"))
    assert len(files) >= 100
    outcomes = [_check(samples_dir, path) for path in files]
    matching = sum(o.matching for o in outcomes)
    total = sum(o.total for o in outcomes)
    exact = sum(1 for o in outcomes if not o.lines)
    ratio = matching / total
    print(f"\nP4Info facts matching p4c: {matching}/{total} = {ratio:.3f}")
    print(f"samples identical by name: {exact}/{len(outcomes)}")
    print(_report(outcomes))
    assert ratio >= REQUIRED, (
        f"{matching}/{total} = {ratio:.3f} of P4Info facts match p4c (need {REQUIRED});"
        f" per sample:\n{_report(outcomes)}"
    )
