"""Fuzzed topology YAML (the shipped files mutated, and documents built from
the format's own keys) and generator parameters through ``intbed topo``:
exit 0 or 1 (2 for a parameter click refuses), never a traceback."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from fuzz_cli_support import assert_handled, fuzz_settings, invoke
from hypothesis import given
from hypothesis import strategies as st
from mutations import mutated

REPO = Path(__file__).resolve().parents[2]
SHIPPED = [p.read_bytes() for p in sorted((REPO / "topologies").glob("*.yaml"))]
YAML_TOKENS = [":", "- ", "{", "}", "[", "]", ",", "\"", "'", "&a", "*a", "!!python/none",
               "---", "...", "\t", "  ", "\n", "null", "~", "yes", "1e999", "-1", "0x10",
               "name: s1", "a_port: 99999", "loss: 2", "delay_us: -5", "ip: 10.0.0.300",
               "mac: zz", "<<: *a"]
KEYS = ["name", "switches", "hosts", "links", "device_id", "program", "ports", "queue_depth",
        "queue_rate_pps", "processing_rate_pps", "clock_offset_us", "mac", "ip", "a", "b",
        "a_port", "b_port", "bandwidth_mbps", "delay_us", "loss", "extra"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=True), st.text(max_size=12),
                    st.sampled_from(["s1", "s2", "h1", "h2", "p4src/l3_forward.p4",
                                     "10.0.0.1", "00:00:00:00:00:01"]))
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
    max_leaves=25)
_names = itertools.count()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("topofuzz")


def topology_bytes() -> st.SearchStrategy[bytes]:
    built = DOCUMENTS.map(lambda doc: yaml.safe_dump(doc, allow_unicode=True).encode())
    return st.one_of(mutated(SHIPPED, YAML_TOKENS, most=5), built)


@fuzz_settings(100)
@given(data=topology_bytes(), suffix=st.sampled_from([".yaml", ".yml", ".json"]))
def test_fuzzed_topology_files(workdir: Path, data: bytes, suffix: str) -> None:
    path = workdir / f"topo{next(_names)}{suffix}"
    path.write_bytes(data)
    outcome = invoke("topo", "show", str(path))
    assert_handled(outcome)
    if outcome.code == 0:
        saved = workdir / f"saved{next(_names)}.yaml"
        assert_handled(invoke("topo", "save", str(path), "-o", str(saved)))


NUMBERS = st.one_of(st.integers(-3, 24).map(str), st.sampled_from(["", "x", "1.5", "1e3",
                                                                  "-0", "0x10", " 4"]))


@fuzz_settings(60)
@given(name=st.sampled_from(["line", "fat-tree", "watts-strogatz", "gpint-ws",
                             "intlabel-fabric", "diamond", "torus"]),
       options=st.lists(st.tuples(st.sampled_from(["--n", "--k", "--p", "--seed",
                                                   "--hosts-per-switch"]), NUMBERS),
                        max_size=3),
       p=st.floats(-1, 2))
def test_fuzzed_generator_parameters(name: str, options: list[tuple[str, str]],
                                     p: float) -> None:
    args = ["topo", "show", name]
    for option, value in options:
        args += [option, f"{p:.3f}" if option == "--p" else value]
    assert_handled(invoke(*args), usage=True)
