"""Figures 20 and 21: the authors' sheet, exactly, and the corrected counts."""

from __future__ import annotations

import pytest

from experiments.intlabel.counting import (
    SCHEMES,
    SHEET_K,
    bandwidth_mbps,
    figure20,
    figure21,
    int_path_generators_claimed,
    probe_generators,
)

SHEET_GENERATORS = {  # INT-path, INT-label, Pingmesh, HULA
    10: (250, 0, 300, 50),
    20: (2000, 0, 2200, 200),
    30: (6750, 0, 7200, 450),
}
SHEET_MBPS = {
    10: (43.3, 32.1, 22.08, 6016),
    20: (346.4, 256.8, 369.92, 398336),
    30: (1169.1, 866.7, 1897.92, 4582656),
}


@pytest.mark.parametrize("k", SHEET_K)
def test_sheet_values_exactly(k):
    assert probe_generators(k) == dict(zip(SCHEMES, SHEET_GENERATORS[k]))
    assert bandwidth_mbps(k) == dict(zip(SCHEMES, SHEET_MBPS[k]))


def test_figure_series_follow_the_sheet():
    g = figure20()
    assert list(g["k"]) == [10, 20, 30]
    assert list(g["INT-path"]) == [250, 2000, 6750] and list(g["INT-label"]) == [0, 0, 0]
    assert list(g["Pingmesh"]) == [300, 2200, 7200] and list(g["HULA"]) == [50, 200, 450]
    b = figure21()
    assert list(b["Pingmesh"]) == [22.08, 369.92, 1897.92]
    assert list(b["HULA"]) == [6016, 398336, 4582656]
    # Section 6: INT-path costs about 35% more bandwidth than INT-label.
    assert b["INT-path"] / b["INT-label"] == pytest.approx([433 / 321] * 3)
    assert round(float(b["INT-path"][0] / b["INT-label"][0]) - 1, 2) == 0.35


def test_corrected_variant():
    g = figure20(variant="corrected")
    assert list(g["INT-path"]) == [10, 1, 30]
    assert list(g["Pingmesh"]) == [300, 2200, 7200] and list(g["HULA"]) == [50, 200, 450]
    b = figure21(variant="corrected")
    assert list(b["Pingmesh"]) == [176.64, 2959.36, 15183.36]
    sheet = figure21()
    for scheme in ("INT-path", "INT-label", "HULA"):
        assert list(b[scheme]) == list(sheet[scheme])
    # With the x8, Pingmesh overtakes INT-path already at k = 10.
    assert b["Pingmesh"][0] > b["INT-path"][0]


def test_int_path_claim_follows_degree_parity():
    assert [int_path_generators_claimed(k) for k in (4, 6, 8, 10, 12)] == [1, 6, 1, 10, 1]
    with pytest.raises(ValueError):
        int_path_generators_claimed(5)
    with pytest.raises(KeyError):
        probe_generators(10, "other")
