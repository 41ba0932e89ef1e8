"""Short names for long ones: the one lookup rule of intbed.

Tables, actions, match fields and the like have dotted, fully qualified
names (``MyIngress.ipv4_lpm``, ``hdr.ipv4.dstAddr``). Wherever a user types
one (P4Runtime requests by name, STF files on the engine or on BMv2, the
engine's control API) the same rule applies, the one the P4Runtime client
needs for P4Info aliases:

1. an exact match wins;
2. else the same after dropping leading dots (P4's top-level ``.name``);
3. else the one choice that ends in ``.`` + the name, a suffix of whole
   dotted components (``ipv4_lpm``, ``ipv4.dstAddr``). A P4Info alias is
   such a suffix, so every alias resolves, and so does any longer suffix
   that is still unique.

A plain-text suffix (``lpm`` for ``ipv4_lpm``) or a prefix never matches:
those would make a name's meaning depend on what else the program holds
in ways a reader cannot see. No match, or several, raise ``NameLookupError``
with the choices.
"""

from __future__ import annotations

from collections.abc import Iterable

from common.errors import IntbedError

__all__ = ["NameLookupError", "lookup"]


class NameLookupError(IntbedError, LookupError):
    """A name that matches none of the choices, or several of them."""

    def __init__(self, message: str, name: str, what: str, matches: list[str],
                 choices: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.what = what
        self.matches = matches  # empty: unknown; two or more: ambiguous
        self.choices = choices


def lookup(name: str, choices: Iterable[str], what: str, where: str = "") -> str:
    """The choice ``name`` stands for, by the rule above. ``what`` names the
    kind of thing and ``where`` where it was looked for, for the error:
    ``lookup("t", tables, "table")`` fails with "no table named 't' (known:
    ...)", ``lookup("x", fields, "match field", "in table T")`` with "no match
    field named 'x' in table T (known: ...)"."""
    names = list(choices)
    if name in names:
        return name
    stripped = name.lstrip(".")
    if stripped in names:
        return stripped
    tail = "." + stripped
    hits = [n for n in names if n.endswith(tail)]
    if len(hits) == 1:
        return hits[0]
    at = f" {where}" if where else ""
    if hits:
        raise NameLookupError(
            f"{what} name '{name}'{at} is ambiguous: {', '.join(sorted(hits))}",
            name, what, sorted(hits), names)
    known = ", ".join(sorted(names)) or "none"
    raise NameLookupError(f"no {what} named '{name}'{at} (known: {known})", name, what, [],
                          names)
