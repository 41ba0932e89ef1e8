"""The compiler and the runtime share ``dataplane.contract`` and
``dataplane.schema`` instead of importing each other: the runtime's
modules import nothing of the compiler at run time, and what both read
from the contract agrees with what the runtime computes."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from dataplane.contract import CRC_ALIASES, CRC_PARAMS, reflected_crc
from dataplane.runtime.externs import HASH_ALGORITHMS

RUNTIME = Path(__file__).resolve().parents[2] / "dataplane" / "runtime"


def _runtime_imports_of_the_compiler(tree: ast.Module) -> list[int]:
    """Lines of imports of ``dataplane.compiler`` outside ``if TYPE_CHECKING:``."""
    checking = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "dataplane.compiler") or isinstance(node, ast.Import) and any(
                a.name.startswith("dataplane.compiler") for a in node.names):
            found.append(node.lineno)
    return found


def test_the_runtime_imports_nothing_of_the_compiler() -> None:
    found = {path.name: lines for path in sorted(RUNTIME.glob("*.py"))
             if (lines := _runtime_imports_of_the_compiler(ast.parse(path.read_text())))}
    assert found == {}
    probe = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from dataplane.compiler.pipeline import X\n"
                      "from dataplane.compiler import schema\n")
    assert _runtime_imports_of_the_compiler(probe) == [4]


def _reflected(data: bytes, poly: int, start: int, xor_out: int) -> int:
    reg = start
    for byte in data:
        reg ^= byte
        for _ in range(8):
            reg = (reg >> 1) ^ (poly if reg & 1 else 0)
    return reg ^ xor_out


def test_the_contracts_reflected_crcs_are_the_runtimes() -> None:
    """A bit-at-a-time reflected CRC on the contract's parameters, as
    generated code computes it, equals the runtime's CRC for every
    algorithm the contract names (the aliases too), and nothing else is
    called a reflected CRC."""
    rng = random.Random(5)
    for algo in [*CRC_PARAMS, *CRC_ALIASES]:
        params = reflected_crc(algo)
        assert params is not None, algo
        for n in (0, 1, 7, 64):
            data = bytes(rng.randrange(256) for _ in range(n))
            assert _reflected(data, *params) == HASH_ALGORITHMS[algo](data), (algo, n)
    for algo in ("identity", "csum16", "xor16", "random", "nope"):
        assert reflected_crc(algo) is None
