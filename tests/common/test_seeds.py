"""common.seeds: one scheme in two layers, and the numbers it gives frozen
(the values were produced by the code before child_seed moved here, so a
run's streams stay byte for byte what they were)."""

from __future__ import annotations

import numpy as np

from common.seeds import child_seed, derive_seed, stream


def test_derived_seeds_are_frozen() -> None:
    assert derive_seed(0) == 9523843951405948789
    assert derive_seed(0, "traffic", "h1") == 4622375380650586512
    assert derive_seed(7, "p4-random", "s1") == 3681259053085761733
    assert derive_seed(7, "loss", "h2", 0) == 17285507230423858097
    assert stream(7, "traffic", "h1").random() == 0.17009383636914932


def test_numbered_children_are_frozen() -> None:
    seed = derive_seed(7, "traffic", "h1")
    assert np.random.default_rng(child_seed(seed, 1)).integers(0, 1 << 62, 3).tolist() == [
        1482155421176566847, 4369285892699653249, 2788989456294522622]
    assert np.random.default_rng(child_seed(child_seed(11, 0), 1)).integers(
        0, 1 << 62, 2).tolist() == [2242069257171142889, 1969259351850082565]


def test_names_are_a_path() -> None:
    """Adding a stream never moves another; every name counts."""
    assert derive_seed(7, "a") != derive_seed(7, "b") != derive_seed(8, "a")
    assert derive_seed(7, "a", "b") != derive_seed(7, "ab")
    assert derive_seed(7, "a", 0) == derive_seed(7, "a", "0")  # names are text


def test_children_are_seedsequence_spawn_keys() -> None:
    """child i is what ``SeedSequence.spawn`` would hand out i-th, without
    spawning (so the parent is left as it was and the call repeats)."""
    parent = np.random.SeedSequence(derive_seed(3, "traffic", "h2"))
    spawned = np.random.SeedSequence(parent.entropy).spawn(3)
    for i in range(3):
        mine = child_seed(parent, i)
        assert mine.spawn_key == spawned[i].spawn_key == (i,)
        assert (mine.generate_state(4) == spawned[i].generate_state(4)).all()
    assert parent.n_children_spawned == 0
    assert child_seed(parent, 2).spawn_key == child_seed(int(parent.entropy), 2).spawn_key
    assert child_seed(child_seed(parent, 1), 4).spawn_key == (1, 4)
