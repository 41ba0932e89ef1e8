"""Text mutations for fuzzing file inputs: a valid file with spans cut,
repeated or replaced, tokens of its language dropped in, bytes that are not
UTF-8, and cuts anywhere (a file truncated by a full disk or a killed copy)."""

from __future__ import annotations

from hypothesis import strategies as st


def mutations(tokens: list[str]) -> st.SearchStrategy[tuple]:
    """One edit: (kind, where as a fraction of the length, payload)."""
    where = st.floats(0.0, 1.0, allow_nan=False)
    return st.one_of(
        st.tuples(st.just("delete"), where, st.integers(1, 60)),
        st.tuples(st.just("repeat"), where, st.integers(1, 60)),
        st.tuples(st.just("insert"), where, st.sampled_from(tokens).map(str.encode)),
        st.tuples(st.just("insert"), where, st.text(max_size=8).map(str.encode)),
        st.tuples(st.just("bytes"), where, st.binary(min_size=1, max_size=4)),
        st.tuples(st.just("truncate"), where, st.just(0)),
    )


def apply_mutations(data: bytes, edits: list[tuple]) -> bytes:
    for kind, fraction, payload in edits:
        at = int(fraction * len(data))
        if kind == "delete":
            data = data[:at] + data[at + payload:]
        elif kind == "repeat":
            data = data[:at + payload] + data[at:]
        elif kind in ("insert", "bytes"):
            data = data[:at] + payload + data[at:]
        else:
            data = data[:at]
    return data


def mutated(texts: list[bytes], tokens: list[str], most: int = 4) -> st.SearchStrategy[bytes]:
    """One of ``texts`` with 1..``most`` edits."""
    return st.builds(apply_mutations, st.sampled_from(texts),
                     st.lists(mutations(tokens), min_size=1, max_size=most))
