"""Fake ``p4c``: records its argv; ``--version`` prints $FAKE_P4C_VERSION; a
compile writes OUT/NAME.json (a copy of $FAKE_P4C_JSON) and the P4Info file
(a copy of $FAKE_P4C_P4INFO), or prints $FAKE_P4C_STDERR and exits 1."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fakelib import option, record  # noqa: E402


def main(argv: list[str]) -> int:
    if "--version" in argv:
        record("p4c", "version", argv=argv)
        print(os.environ.get("FAKE_P4C_VERSION", "p4c 1.2.4.99 (SHA: fake BUILD: test)"))
        return 0
    record("p4c", "compile", argv=argv)
    error = os.environ.get("FAKE_P4C_STDERR")
    if error:
        sys.stderr.write(error)
        return 1
    out_dir = Path(option(argv, "-o") or ".")
    source = Path(argv[-1])
    if not source.is_file():
        sys.stderr.write(f"error: {source}: No such file or directory\n")
        return 1
    json_src = os.environ.get("FAKE_P4C_JSON")
    text = Path(json_src).read_text() if json_src else json.dumps({"program": source.stem})
    (out_dir / f"{source.stem}.json").write_text(text)
    p4info = option(argv, "--p4runtime-files")
    if p4info:
        info_src = os.environ.get("FAKE_P4C_P4INFO")
        Path(p4info).write_text(Path(info_src).read_text() if info_src else "# fake\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
