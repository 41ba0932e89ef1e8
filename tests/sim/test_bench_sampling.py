"""``intbed bench sim --sample``: perf's samples of the simulated run alone,
grouped by the part of the sim (or of CPython) they landed in."""

from __future__ import annotations

import pytest

from benchmarks.sampling import parse_report, part_of, perf_missing, sample, short_symbol, summarize
from benchmarks.sim import fast_path
from common.errors import IntbedError
from fastpath import loader

SWITCH = "dataplane.runtime.switch-2e292b93944c70175ab5a0de.cpython-311-x86_64-linux-gnu.so"
PIPELINE = "p4gen_bafc55cf16d636c110f1371b.cpython-311-x86_64-linux-gnu.so"

# perf report -F overhead,sample,dso,sym -g none --stdio -t '\t', as perf 6.1 prints it.
REPORT = (
    "# Samples: 1K of event 'cpu-clock'\n"
    "#\n"
    "# Overhead\tSamples\tShared Object\tSymbol\n"
    f" 50.00%  \t 500        \t{PIPELINE}   \t[.] __pyx_pf_30p4gen_bafc55cf16d636c110f1371b"
    "_4make_42c_MyDeparser_21\n"
    f" 30.00%  \t 300        \t{SWITCH}     \t[.] __pyx_pw_9dataplane_7runtime_6switch_6Switch"
    "_16_bind_data_plane_3ingress\n"
    " 15.00%  \t 150        \tlibpython3.11.so.1.0   \t[.] _Py_dict_lookup\n"
    "  5.00%  \t  50        \t[kernel.kallsyms]      \t[k] clear_page_erms\n"
    "\n"
)


def test_a_report_is_read_into_parts_that_add_up() -> None:
    rows = parse_report(REPORT)
    assert [(n, sym.split("_")[-1]) for n, _, sym in rows] == [
        (500, "21"), (300, "3ingress"), (150, "lookup"), (50, "erms")]
    out = summarize(rows, top=2)
    assert out["samples"] == 1000
    assert out["parts_pct"] == {"pipeline (generated)": 50.0,
                                "engine": 30.0,
                                "CPython: dictionary lookups": 15.0,
                                "C library and kernel": 5.0}
    assert [r["pct"] for r in out["top"]] == [50.0, 30.0]
    assert out["top"][1]["function"] == ("dataplane.runtime.switch: "
                                         "6Switch_16_bind_data_plane_3ingress")
    assert out["top"][0]["function"] == "pipeline: 4make_42c_MyDeparser_21"


def test_cpython_samples_are_grouped_by_what_it_was_doing() -> None:
    lib = "libpython3.11.so.1.0"
    assert part_of(lib, "PyMember_GetOne") == "CPython: attribute and method lookups"
    assert part_of(lib, "_PyObject_Free") == "CPython: allocating and freeing objects"
    assert part_of(lib, "tupledealloc") == "CPython: allocating and freeing objects"
    assert part_of(lib, "long_add").startswith("CPython: other")
    assert part_of("traffic.receiver-0123456789abcdef01234567.cpython-311-x86_64-linux-gnu.so",
                   "x") == "traffic"
    assert short_symbol(lib, "_Py_dict_lookup") == "_Py_dict_lookup"


def test_no_samples_is_an_error_not_an_empty_table() -> None:
    with pytest.raises(IntbedError, match="no samples"):
        summarize([], top=5)


@pytest.mark.skipif(perf_missing() is not None, reason=str(perf_missing()))
def test_only_the_run_is_sampled() -> None:
    report = sample("fabric", 10.0, frequency=1000)
    run = report["run"]
    assert run["packet_hops"] > 10_000
    assert abs(sum(report["parts_pct"].values()) - 100) < 0.1
    # Interpreted (fast path off, or this pipeline not built) the
    # pipeline's time is the interpreter's.
    if loader.enabled() and fast_path()["pipelines"]["l3_forward"]:
        assert report["parts_pct"]["pipeline (generated)"] > 0
    # Start-up (imports, compiling the program, building the network) takes
    # longer than this run; sampling it too would give several times the
    # samples the run's wall time can hold.
    assert 0 < report["samples"] <= run["wall_s"] * 1000 * 1.5 + 50
