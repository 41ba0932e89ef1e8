"""The header types of ``p4src/*.p4`` as intbed's own P4 front end reads them,
for tests that check a hand-written Python parser or builder against the P4
declaration it mirrors.

``program(name)`` preprocesses, parses and type-checks one program (cpp,
the LALR parser, ``direct_calls``, then ``checked``: the checker and
v1model's target rules as ``check_program`` runs them, keeping the
checker's resolved types) and gives every header type it declares with its
fields in order, each with its resolved bit width and its bit offset
from the header's first bit on the wire; the top-level constants with their
values (``-D`` macros folded); the structs' members (a stack's size, the
order of a headers struct); and the field lists of its ``hash`` calls.
``declared_headers()`` is every header type of every program, keyed by the
file that declares it.

Ways to hold a Python layout against a P4 one:

- ``struct_fields(st, *headers)`` / ``dtype_fields(dt, *headers)`` say which
  P4 fields each item of a ``struct.Struct`` (or each field of a numpy
  structured dtype) reads, and fail when an item cuts across a field
  boundary or the sizes differ; a test compares the answer with the order
  the Python code unpacks in.
- ``spec_fields(specs, *headers)``: the same for (offset, size, shift, mask)
  value specs, ``describe_bits`` for any bit range.
- ``Header.pack`` / ``Header.unpack`` / ``Header.sample``: bytes from P4
  field values by the P4 widths alone, for round trips through the Python
  parser (``ipv4`` adds a correct header checksum).
"""


from __future__ import annotations

import dataclasses
import random
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from common.checksum import internet_checksum
from dataplane.compiler.check import env
from dataplane.compiler.check.checker import checked
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.direct_calls import instantiate_direct_calls
from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.frontend.types import HeaderT, StackT, StructLikeT, field_bits, strip
from p4src import DIR as P4SRC
from p4src import programs as program_paths


@dataclass(frozen=True)
class Field:
    """One header field: ``offset`` bits after the header's first bit (the
    most significant bit of its first byte), ``bits`` wide."""

    name: str
    bits: int
    offset: int

    @property
    def end(self) -> int:
        return self.offset + self.bits

    @property
    def byte_offset(self) -> int:
        """The byte the field starts in; only for a field on a byte boundary."""
        if self.offset % 8:
            raise AssertionError(f"field {self.name} starts at bit {self.offset}, not on a byte")
        return self.offset // 8

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


@dataclass(frozen=True)
class Header:
    """A P4 header type: ``file`` relative to p4src/ (``include/...`` for a
    shared header file), the line of its declaration."""

    name: str
    file: str
    line: int
    fields: tuple[Field, ...]

    @property
    def bits(self) -> int:
        return sum(f.bits for f in self.fields)

    @property
    def size(self) -> int:
        """Bytes on the wire (BMv2 extracts whole bytes only)."""
        if self.bits % 8:
            raise AssertionError(f"header {self.name} is {self.bits} bits, not whole bytes")
        return self.bits // 8

    @property
    def layout(self) -> tuple[tuple[str, int], ...]:
        """(field, bits) in order."""
        return tuple((f.name, f.bits) for f in self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"header {self.name} has no field {name!r} (it has {self.names})")

    def offset(self, name: str) -> int:
        """Byte offset of field ``name`` (which must start on a byte)."""
        return self.field(name).byte_offset

    def pack(self, values: Mapping[str, int] | None = None, **more: int) -> bytes:
        """The header's bytes from field values (missing fields 0), each
        placed by its P4 width alone; a value too wide for its field is an
        error, not truncated."""
        given = {**(values or {}), **more}
        unknown = set(given) - set(self.names)
        if unknown:
            raise KeyError(f"header {self.name} has no fields {sorted(unknown)}")
        word = 0
        for f in self.fields:
            v = given.get(f.name, 0)
            if not 0 <= v <= f.mask:
                raise ValueError(f"{self.name}.{f.name} = {v} does not fit {f.bits} bits")
            word = (word << f.bits) | v
        return word.to_bytes(self.size, "big")

    def unpack(self, data: bytes, at: int = 0) -> dict[str, int]:
        """Field values of the header at byte ``at`` of ``data``."""
        chunk = bytes(data[at:at + self.size])
        if len(chunk) != self.size:
            raise ValueError(f"{self.name} needs {self.size} bytes at {at}, "
                             f"{len(chunk)} are there")
        word = int.from_bytes(chunk, "big")
        return {f.name: (word >> (self.bits - f.end)) & f.mask for f in self.fields}

    def sample(self, rng: random.Random, **fixed: int) -> dict[str, int]:
        """Random values for every field (``fixed`` ones as given)."""
        out = {f.name: rng.getrandbits(f.bits) for f in self.fields}
        out.update(fixed)
        return out


@dataclass(frozen=True)
class Member:
    """A struct member: ``type`` the name of a header, struct or ``bit<N>``
    type, ``stack`` the size of a header stack (None otherwise)."""

    name: str
    type: str
    stack: int | None = None


@dataclass(frozen=True)
class Program:
    name: str
    path: Path
    headers: Mapping[str, Header]
    consts: Mapping[str, int]
    structs: Mapping[str, tuple[Member, ...]]
    tree: Any = dataclasses.field(default=None, compare=False, repr=False)
    facts: Any = dataclasses.field(default=None, compare=False, repr=False)

    def hash_inputs(self, result: str) -> list[list[tuple[str, int]]]:
        """The field list of every ``hash(result, ...)`` call, each element
        as its text (``hdr.ipv4.srcAddr``) and its width as the checker
        typed it."""
        out = []
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.name == "hash" and len(node.args) >= 4
                    and _text(node.args[0].value) == result):
                continue
            data = node.args[3].value
            assert isinstance(data, ast.ListExpr), f"hash data at {node.loc} is not a list"
            out.append([(_text(e), field_bits(self.facts.type_of(e))) for e in data.elems])
        return out

    def header(self, name: str) -> Header:
        try:
            return self.headers[name]
        except KeyError:
            raise KeyError(f"{self.path.name} declares no header {name!r} "
                           f"(it has {sorted(self.headers)})") from None

    def const(self, name: str) -> int:
        try:
            return self.consts[name]
        except KeyError:
            raise KeyError(f"{self.path.name} declares no constant {name!r}") from None

    def members(self, struct_name: str) -> tuple[Member, ...]:
        return self.structs[struct_name]

    def member(self, struct_name: str, name: str) -> Member:
        for m in self.structs[struct_name]:
            if m.name == name:
                return m
        raise KeyError(f"{struct_name} has no member {name!r}")



def _text(e: object) -> str:
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.Member):
        return f"{_text(e.expr)}.{e.name}"
    return type(e).__name__


def _relative(file: str) -> str:
    p = Path(file).resolve()
    return p.relative_to(P4SRC).as_posix() if p.is_relative_to(P4SRC) else str(p)


def _member(name: str, t: object) -> Member:
    t = strip(t)  # type: ignore[arg-type]
    if isinstance(t, StackT):
        return Member(name, str(strip(t.elem)), t.size)
    return Member(name, str(t))


@cache
def program(name: str) -> Program:
    """p4src/``name``.p4 through the front end and the checker (its default
    ``-D`` values, as intbed compiles it)."""
    path = P4SRC / f"{name}.p4"
    tree = parse_file(path)
    instantiate_direct_calls(tree)
    checker = checked(tree)  # check_program's checker: a program BMv2 would load
    root = checker.scope
    headers: dict[str, Header] = {}
    consts: dict[str, int] = {}
    structs: dict[str, tuple[Member, ...]] = {}
    for d in tree.decls:
        if isinstance(d, ast.HeaderDecl):
            t = root.lookup(d.name).type
            assert isinstance(t, HeaderT), d.name
            fields, at = [], 0
            for fname, ftype in t.fields:
                bits = field_bits(ftype)
                fields.append(Field(fname, bits, at))
                at += bits
            headers[d.name] = Header(d.name, _relative(d.loc.file), d.loc.line, tuple(fields))
        elif isinstance(d, ast.StructDecl):
            t = root.lookup(d.name).type
            assert isinstance(t, StructLikeT), d.name
            structs[d.name] = tuple(_member(n, ft) for n, ft in t.fields)
        elif isinstance(d, ast.ConstDecl) and Path(d.loc.file).resolve().is_relative_to(P4SRC):
            ent = root.lookup(d.name)
            if ent is not None and ent.kind == env.CONST and isinstance(ent.value, int):
                consts[d.name] = ent.value
    return Program(name, path, headers, consts, structs, tree, checker.facts)


def programs() -> list[Program]:
    """Every program in p4src/."""
    return [program(p.stem) for p in program_paths()]


def declared_headers() -> dict[tuple[str, str], Header]:
    """Every header type of p4src by (declaring file, name): a header of a
    shared include counts once however many programs include it."""
    out: dict[tuple[str, str], Header] = {}
    for prog in programs():
        for h in prog.headers.values():
            out.setdefault((h.file, h.name), h)
    return out


# --------------------------------------------------------------- packing

def pack(*parts: tuple[Header, Mapping[str, int]] | bytes) -> bytes:
    """Headers (with their values) and raw bytes, back to back."""
    out = []
    for part in parts:
        out.append(part if isinstance(part, bytes | bytearray) else part[0].pack(part[1]))
    return b"".join(out)


def ipv4(header: Header, **values: int) -> bytes:
    """An ``ipv4_t`` with version 4, IHL 5 and a correct header checksum."""
    v = {**values, "version": 4, "ihl": 5, "hdrChecksum": 0}
    raw = header.pack(v)
    v["hdrChecksum"] = internet_checksum(raw)
    return header.pack(v)


# --------------------------------------------------- layouts side by side

_CODES = re.compile(r"(\d*)([xcbB?hHiIlLqQnNefdspP])")


def struct_items(st: struct.Struct | str) -> list[tuple[str, int]]:
    """(code, bytes) of each value a struct format reads, pads as ``x``
    items: ``"!BH2x4s"`` -> [("B", 1), ("H", 2), ("x", 2), ("s", 4)]."""
    fmt = st.format if isinstance(st, struct.Struct) else st
    if fmt[:1] not in "!>":
        raise AssertionError(f"struct format {fmt!r} is not big-endian with standard sizes")
    out: list[tuple[str, int]] = []
    pos = 1
    for m in _CODES.finditer(fmt, 1):
        if m.start() != pos:
            raise AssertionError(f"cannot read struct format {fmt!r} at {fmt[pos:]!r}")
        pos = m.end()
        count, code = int(m.group(1) or 1), m.group(2)
        if code in "spx":
            out.append((code, count))
        else:
            out += [(code, struct.calcsize("!" + code))] * count
    if pos != len(fmt):
        raise AssertionError(f"cannot read struct format {fmt!r} at {fmt[pos:]!r}")
    return out


def _qualified(headers: Sequence[Header]) -> list[tuple[str, Field, int]]:
    """(label, field, bit offset in the concatenation) of every field."""
    out, base = [], 0
    for h in headers:
        for f in h.fields:
            label = f.name if len(headers) == 1 else f"{h.name}.{f.name}"
            out.append((label, f, base + f.offset))
        base += h.bits
    return out


def describe_bits(start: int, bits: int, headers: Sequence[Header], *,
                  parts: bool = False) -> str:
    """What bits [start, start + bits) of the headers back to back are:
    ``a+b`` for whole fields a and b, ``f[hi:lo]`` for a part of field f
    (P4 slice, bit 0 its least significant). Bits that cut across a field
    boundary otherwise are an AssertionError, unless ``parts``: then the
    fields cut at either end appear as slices (``f[1:0]+g+h[7:4]``)."""
    end = start + bits
    total = sum(h.bits for h in headers)
    if end > total:
        raise AssertionError(f"bits {start}..{end} run past the end of "
                             f"{'+'.join(h.name for h in headers)} ({total} bits)")
    touched = [(label, f, at) for label, f, at in _qualified(headers)
               if at < end and at + f.bits > start]
    first, last = touched[0], touched[-1]
    if len(touched) > 1 and not parts and (first[2] != start or last[2] + last[1].bits != end):
        raise AssertionError(
            f"bits {start}..{end} cut across P4 fields "
            + ", ".join(f"{label} ({at}..{at + f.bits})" for label, f, at in touched))
    out = []
    for label, f, at in touched:
        lo_bit, hi_bit = max(at, start), min(at + f.bits, end)
        if (lo_bit, hi_bit) == (at, at + f.bits):
            out.append(label)
        else:
            out.append(f"{label}[{at + f.bits - 1 - lo_bit}:{at + f.bits - hi_bit}]")
    return "+".join(out)


def struct_fields(st: struct.Struct | str, *headers: Header, at: int = 0,
                  exact: bool = True) -> list[str]:
    """The P4 fields each item of ``st`` reads, starting ``at`` bytes into
    the headers back to back (``describe_bits`` labels; a pad is ``-`` and
    its label). With ``exact``, the struct must end where the headers do;
    otherwise it only must not run past them."""
    out, pos = [], 8 * at
    for code, size in struct_items(st):
        label = describe_bits(pos, 8 * size, headers)
        out.append("-" + label if code == "x" else label)
        pos += 8 * size
    total = sum(h.bits for h in headers)
    if exact and pos != total:
        raise AssertionError(f"struct {getattr(st, 'format', st)!r} reads {pos // 8} bytes, "
                             f"{'+'.join(h.name for h in headers)} are {total // 8}")
    return out


def dtype_fields(dt: np.dtype, *headers: Header) -> dict[str, str]:
    """For each field of a numpy structured dtype, the P4 fields it reads
    (``describe_bits`` labels), checking that every field is big-endian (or
    one byte) and that the record is exactly the headers' size."""
    out = {}
    for name, (ft, offset, *_) in sorted(dt.fields.items(), key=lambda kv: kv[1][1]):
        if ft.itemsize > 1 and ft.byteorder != ">":
            raise AssertionError(f"dtype field {name} is {ft.str}, not big-endian")
        out[name] = describe_bits(8 * offset, 8 * ft.itemsize, headers)
    total = sum(h.bits for h in headers) // 8
    if dt.itemsize != total:
        raise AssertionError(f"dtype of {dt.itemsize} bytes, "
                             f"{'+'.join(h.name for h in headers)} are {total}")
    return out


def spec_fields(specs: Iterable[tuple[int, int, int, int]], *headers: Header) -> list[str]:
    """For (byte offset, bytes, shift, mask) specs (a value is
    ``(word >> shift) & mask`` of the big-endian word of ``bytes`` bytes at
    the offset), the P4 bits each reads (``describe_bits`` labels)."""
    out = []
    for offset, size, shift, mask in specs:
        width = mask.bit_length()
        if mask != (1 << width) - 1:
            raise AssertionError(f"mask 0x{mask:x} is not contiguous low bits")
        if shift + width > 8 * size:
            raise AssertionError(f"shift {shift} + {width} bits do not fit a {size}-byte word")
        start = 8 * offset + 8 * size - shift - width
        out.append(describe_bits(start, width, headers))
    return out
