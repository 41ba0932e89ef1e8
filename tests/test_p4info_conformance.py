"""P4Info of every p4c sample, compiled by intbed, against the file p4c wrote for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dataplane.compiler.p4info import build_p4info, compare_p4info, load_text, score
from dataplane.compiler.pipeline import compile_file

# P4Info facts (names, fields, widths, references) over every sample, and how
# many agree with p4c today. The only misses are predication_issue_1/2, where
# p4c's P4Info lists no parameter for an action intbed gives one; fewer
# matches is a regression, and a different total means the samples or the
# scoring changed (update both figures then, deliberately).
TOTAL = 497
REQUIRED = 495
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
    # A sample that no longer compiles raises here and fails the test with its
    # traceback: it is a compiler regression, not a P4Info miss.
    program = compile_file(samples / f"{sample}.p4", include_dirs=(samples,))
    ours = build_p4info(program.schema)
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
    print(f"\nP4Info facts matching p4c: {matching}/{total}")
    print(f"samples identical by name: {exact}/{len(outcomes)}")
    print(_report(outcomes))
    assert total == TOTAL, f"{total} P4Info facts scored, expected {TOTAL}"
    assert matching >= REQUIRED, (
        f"{matching}/{total} P4Info facts match p4c (need {REQUIRED});"
        f" per sample:\n{_report(outcomes)}"
    )
