"""Every header type declared in p4src is checked by a format test.

Each ``test_formats_*`` module of this directory names the P4 headers it
holds a Python parser or builder against in ``COVERS`` (by declaring file
and name). A header type added to a program, or a new program, fails here
until a format test covers it or it is listed in ``NO_PYTHON_PARSER`` with
the reason no Python code reads or builds it. A listed or covered header
that no longer exists fails too, so the lists stay true."""

from __future__ import annotations

import importlib
from pathlib import Path

from p4headers import declared_headers

HERE = Path(__file__).resolve().parent

NO_PYTHON_PARSER: dict[tuple[str, str], str] = {}
"""(file, header) -> why no format test covers it. Empty: every header of
p4src has Python code that reads or builds it, or (a program's own copy of
Ethernet, IPv4, UDP or the L4 ports) one layout all copies are checked
equal to (test_formats_ethernet_ipv4)."""


def _format_modules() -> dict[str, object]:
    names = sorted(p.stem for p in HERE.glob("test_formats_*.py") if p.stem != Path(__file__).stem)
    return {name: importlib.import_module(name) for name in names}


def test_every_p4_header_is_covered_or_listed() -> None:
    declared = set(declared_headers())
    covered: dict[tuple[str, str], list[str]] = {}
    for name, module in _format_modules().items():
        for key in getattr(module, "COVERS", ()):
            covered.setdefault(key, []).append(name)
    missing = sorted(declared - set(covered) - set(NO_PYTHON_PARSER))
    assert not missing, (
        f"P4 header types no format test covers: {missing}; check the Python code that "
        f"parses or builds them against the declaration in a tests/formats test (and add "
        f"them to its COVERS), or list them in NO_PYTHON_PARSER with the reason")
    stale = sorted((set(covered) | set(NO_PYTHON_PARSER)) - declared)
    assert not stale, f"covered or listed headers p4src no longer declares: {stale}"
    both = sorted(set(covered) & set(NO_PYTHON_PARSER))
    assert not both, f"headers both covered and listed as having no parser: {both}"


def test_covering_modules_name_their_headers() -> None:
    """A module's COVERS is not a bare claim: it names each header it
    covers in its own text."""
    for name, module in _format_modules().items():
        text = (HERE / f"{name}.py").read_text()
        for _, header in getattr(module, "COVERS", ()):
            assert f'"{header}"' in text, f"{name} covers {header} but never names it"


def test_there_is_something_to_cover() -> None:
    files = {file for file, _ in declared_headers()}
    assert {"include/gpint_headers.p4", "include/intlabel_headers.p4",
            "include/int_md_headers.p4", "hula.p4", "l3_forward.p4", "pint.p4"} <= files
