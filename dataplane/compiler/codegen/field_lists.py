"""Field lists: the (value, width) tuples and packed bytes that hash,
checksum and action-selector input are computed over, with the fields of
invalid headers left out as BMv2 leaves them out. Apart because externs
and tables (a selector's group choice) both build them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.codegen.values import Val, slot
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    HeaderT,
    IntT,
    StackT,
    StructLikeT,
    Type,
    VarbitT,
    field_bits,
    slots,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


_PACK_CODES = {8: "B", 16: "H", 32: "I", 48: "IH", 64: "Q"}
"""struct codes of the whole-byte widths ``packed_fields`` packs (48 bits as
two fields)."""


class FieldListMixin:
    """Field-list compilation for CodeGen."""

    def field_list(self: CodeGen, e: ast.Expr, vals: list[Val] | None = None) -> str:
        """Code for a tuple of (value, width) pairs built from a data
        argument; fields of invalid headers are left out, as BMv2 does.
        ``vals``: the list's elements evaluated already."""
        if isinstance(e, ast.ListExpr):
            out = []
            for i, x in enumerate(e.elems):
                v = vals[i] if vals is not None else self.ev(x)
                items = self._flist(v.type, self.flat(v), None)
                valid = self._header_valid(x)
                if valid is not None and not isinstance(strip(v.type), HeaderT):
                    items = [f"*(({''.join(items)}) if {valid} else ()), "]
                out += items
            return "(" + "".join(out) + ")"
        v = self.ev(e)
        return "(" + "".join(self._flist(v.type, self.flat(v), None)) + ")"

    def byte_fields(self: CodeGen, elems: list[ast.Expr], vals: list[Val]
                    ) -> list[tuple[str | None, list[tuple[str, int]]]] | None:
        """A list of whole-byte unsigned fields (8, 16, 32, 48 or 64 bits) as
        runs under one validity bit each (None: always present), each field
        as (code, width). None: the list needs the general path."""
        runs: list[tuple[str | None, list[tuple[str, int]]]] = []
        for x, v in zip(elems, vals):
            t = strip(v.type)
            if v.parts is not None or not isinstance(t, BitT) or t.signed \
                    or t.width not in _PACK_CODES:
                return None
            valid = self._header_valid(x)
            if not runs or runs[-1][0] != valid:
                runs.append((valid, []))
            runs[-1][1].append((v.code, t.width))
        return runs

    def packed_fields(self: CodeGen,
                      byte_runs: list[tuple[str | None, list[tuple[str, int]]]]) -> str:
        """Code for the bytes ``pack_bits`` would make of ``byte_fields``'
        runs: each run packed by one ``struct`` call, an invalid header's run
        left out. Field values are always within their width, so the bytes
        are those fields' big-endian bytes in order."""
        runs: list[tuple[str | None, list[tuple[str, str]]]] = []
        for valid, fields in byte_runs:
            packs: list[tuple[str, str]] = []
            for code, width in fields:
                if width == 48:
                    packs.extend((("I", f"({code}) >> 16"), ("H", f"({code}) & 65535")))
                else:
                    packs.append((_PACK_CODES[width], code))
            runs.append((valid, packs))
        parts = []
        for valid, fields in runs:
            k = self.struct_formats.setdefault(">" + "".join(c for c, _ in fields),
                                               len(self.struct_formats))
            call = f"SP{k}({', '.join(code for _, code in fields)})"
            parts.append(call if valid is None else f"({call} if {valid} else b'')")
        return " + ".join(parts)

    def _header_valid(self: CodeGen, e: ast.Expr) -> str | None:
        """Validity bit of the header a field expression reads, if any: BMv2
        leaves fields of invalid headers out of hash and checksum input."""
        while isinstance(e, ast.Member | ast.Slice):
            inner = e.expr
            checked = self.checked_type(inner)
            if checked is None:  # a type name (Enum.X) or a generic body's
                try:
                    v = self.ev(inner)
                except Exception:  # noqa: BLE001 - not a value: no header to check
                    return None
            elif isinstance(checked, HeaderT):
                v = self.ev(inner)
            else:
                e = inner
                continue
            if isinstance(strip(v.type), HeaderT) and v.base is not None:
                return slot(v.base)
            e = inner
        return None

    def _flist(self: CodeGen, t: Type, parts: list[str], valid: str | None) -> list[str]:
        t = strip(t)
        out: list[str] = []
        if isinstance(t, HeaderT):
            valid_code = parts[0]
            k = 1
            inner: list[str] = []
            for _, ft in t.fields:
                n = slots(ft)
                inner += self._flist(ft, parts[k:k + n], None)
                k += n
            return [f"*(({''.join(inner)}) if {valid_code} else ()), "]
        if isinstance(t, StructLikeT) or hasattr(t, "elems"):
            k = 0
            children = [ft for _, ft in t.fields] if isinstance(t, StructLikeT) else list(
                t.elems)  # type: ignore[attr-defined]
            for ft in children:
                n = slots(ft)
                out += self._flist(ft, parts[k:k + n], valid)
                k += n
            return out
        if isinstance(t, StackT):
            k = 1
            for _ in range(t.size):
                n = slots(t.elem)
                out += self._flist(t.elem, parts[k:k + n], valid)
                k += n
            return out
        if isinstance(t, VarbitT):
            return [f"({parts[0]}, {parts[1]}), "]
        if isinstance(t, BoolT):
            return [f"((1 if {parts[0]} else 0), 1), "]
        if isinstance(t, IntT):
            raise self.err(None, "field list element needs a width")
        return [f"({parts[0]}, {field_bits(t)}), "]
