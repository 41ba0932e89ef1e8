"""Runner for p4c's STF packet tests (``*.stf``) on intbed's engine.

The format is p4c's (``tools/stf``, run on BMv2 by ``backends/bmv2/bmv2stf.py``):
one command a line, ``#`` to the end of a line is a comment, keywords are
case-insensitive, and a command never continues on the next line. The
conversions below follow what ``bmv2stf.py`` hands to ``simple_switch_CLI``,
so a test means here what it means on BMv2:

* ``add TABLE [PRIO] ...``: bmv2stf passes ``10000 - PRIO`` to BMv2, where the
  lower number wins; a larger STF priority therefore wins, which is exactly
  the Switch's (P4Runtime) order, so PRIO is used unchanged.
* A ternary key written ``0x..``/``0b..`` without ``&&&`` gets a mask of ones
  for every digit written and zeros for ``*`` digits (so ``0x0a`` on a 16-bit
  field masks only the low byte, as on BMv2). An lpm key without ``/`` gets a
  prefix of the non-``*`` digits written times the bits per digit. Decimal
  values mean the whole value.
* Only ports named by a ``packet`` or ``expect`` line are observed: bmv2stf
  opens pcap interfaces for those alone, so BMv2 silently loses packets sent
  anywhere else.
* ``expect PORT`` with no data stands for one packet of any content.
* ``wait`` is a no-op: the Switch's traffic manager is immediate.
* ``add`` on an indirect table (one with an ``implementation``) is accepted
  as p4c's grammar accepts it: the action becomes a member of its own, which
  the entry points at. Members and selector groups are programmed with
  simple_switch_CLI's commands, written as that CLI takes them:
  ``act_prof_create_member PROFILE ACTION [ARG...]``,
  ``act_prof_delete_member PROFILE MBR``, ``act_prof_create_group PROFILE``,
  ``act_prof_delete_group PROFILE GRP``,
  ``act_prof_add_member_to_group PROFILE MBR GRP``,
  ``act_prof_remove_member_from_group PROFILE MBR GRP``,
  ``table_indirect_add TABLE KEY... => MBR [PRIO]`` and
  ``table_indirect_add_with_group TABLE KEY... => GRP [PRIO]`` (keys in the
  table's order: ``V``, ``V/LEN``, ``V&&&MASK`` or ``LOW->HIGH``). Handles
  are BMv2's: the smallest free one, from 0, in order of creation.

As strict as p4c's runner: a test with no ``packet`` line checks nothing and
is an error, not a pass; expected data with an odd number of hex digits is a
cut byte (a file truncated inside an ``expect`` line); and every port must fit
v1model's 9-bit ``PortId_t``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from common.errors import IntbedError, Loc, StfError
from common.names import NameLookupError, lookup
from common.textfile import read_text
from dataplane.runtime.action_profiles import IndirectRef
from dataplane.runtime.tables import Exact, Lpm, MatchSpec, RangeMatch, Ternary

if TYPE_CHECKING:
    from dataplane.compiler.pipeline import CompiledProgram
    from dataplane.runtime.switch import Switch
    from dataplane.schema import MatchFieldInfo, ProgramSchema, TableInfo

__all__ = [
    "ActProf",
    "Expect",
    "McGroupCreate",
    "McNodeAssociate",
    "McNodeCreate",
    "MirroringAdd",
    "Packet",
    "SetDefault",
    "StfCommand",
    "StfKey",
    "StfResult",
    "TableAdd",
    "TableIndirectAdd",
    "Wait",
    "apply_command",
    "compare_outputs",
    "find_conformance_cases",
    "first_mismatch",
    "parse_stf",
    "parse_stf_text",
    "require_packets",
    "run_conformance_case",
    "run_stf",
]


# --- commands -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Packet:
    """``packet PORT HEX``: inject ``data`` on ingress ``port``."""

    loc: Loc
    port: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Expect:
    """``expect PORT [HEX] [$]``; ``nibbles`` is upper-case hex with ``*`` wildcards,
    or None for "any packet"; ``exact`` is the trailing ``$``."""

    loc: Loc
    port: int
    nibbles: str | None
    exact: bool = False


@dataclass(frozen=True, slots=True)
class StfKey:
    """One ``NAME:VALUE`` of an ``add``.

    ``mask`` comes from ``V&&&M`` and ``prefix_len`` from ``V/N``. For a literal
    with a radix prefix, ``care_mask`` has ones under every digit written and
    zeros under ``*`` digits, and ``care_bits`` counts those ones; both are None
    for a decimal literal.
    """

    name: str
    value: int
    mask: int | None = None
    prefix_len: int | None = None
    care_mask: int | None = None
    care_bits: int | None = None
    has_wildcards: bool = False
    high: int | None = None  # ``LOW->HIGH`` of a range key (value is LOW)


@dataclass(frozen=True, slots=True)
class TableAdd:
    loc: Loc
    table: str
    keys: tuple[StfKey, ...]
    action: str
    args: tuple[tuple[str, int], ...]
    priority: int | None = None


@dataclass(frozen=True, slots=True)
class SetDefault:
    loc: Loc
    table: str
    action: str
    args: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class MirroringAdd:
    loc: Loc
    session: int
    port: int


@dataclass(frozen=True, slots=True)
class McGroupCreate:
    loc: Loc
    group: int


@dataclass(frozen=True, slots=True)
class McNodeCreate:
    loc: Loc
    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class McNodeAssociate:
    loc: Loc
    group: int
    node: int


@dataclass(frozen=True, slots=True)
class Wait:
    loc: Loc


@dataclass(frozen=True, slots=True)
class ActProf:
    """An ``act_prof_*`` command: ``op`` is the CLI's name without the prefix;
    ``numbers`` are the action arguments of ``create_member``, else handles."""

    loc: Loc
    op: str
    profile: str
    action: str = ""
    numbers: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TableIndirectAdd:
    """``table_indirect_add[_with_group] TABLE KEY... => HANDLE [PRIO]``."""

    loc: Loc
    table: str
    handle: int
    group: bool  # the handle names a group, not a member
    keys: tuple[str, ...] = ()
    priority: int | None = None


StfCommand = (
    Packet | Expect | TableAdd | SetDefault | MirroringAdd | McGroupCreate | McNodeCreate
    | McNodeAssociate | Wait | ActProf | TableIndirectAdd
)

# act_prof_* commands: the number of handles each takes after the profile name.
_ACT_PROF_HANDLES = {
    "delete_member": 1, "create_group": 0, "delete_group": 1,
    "add_member_to_group": 2, "remove_member_from_group": 2,
}

# --- parsing --------------------------------------------------------------------------------

_NAME = r"(?:\"[^\"]+\"|[A-Za-z_$][\w$]*(?:\[\d+\])?(?:\.[A-Za-z_$][\w$]*(?:\[\d+\])?)*)"
_NAME_RE = re.compile(_NAME + r"\Z")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_RADIX = {"0x": (16, 4), "0b": (2, 1), "0o": (8, 3)}
# v1model's PortId_t is bit<9>: ports 0..511 (511 is BMv2's drop port).
PORT_BITS = 9
MAX_PORT = (1 << PORT_BITS) - 1
# simple_switch_CLI commands bmv2stf passes through that the runner does not model.
_UNSUPPORTED = frozenset({
    "remove", "check_counter", "no_packet", "mirroring_add_mc", "mirroring_delete",
    "mirroring_get", "mc_node_update", "counter_read", "counter_write", "register_read",
    "register_write", "register_reset", "meter_get_rates", "meter_set_rates",
    "meter_array_set_rates",
})


def parse_stf(path: str | Path) -> list[StfCommand]:
    """Parse an STF file; a malformed line raises StfError located at it."""
    path = Path(path)
    return parse_stf_text(read_text(path, "STF file", StfError), str(path))


def require_packets(commands: Sequence[StfCommand], filename: str) -> int:
    """The number of ``packet`` lines; none is an error, as in p4c's runner:
    a test that sends nothing would pass whatever the program does."""
    count = sum(1 for cmd in commands if isinstance(cmd, Packet))
    if not count:
        raise StfError("no 'packet' line: the test sends nothing, so it would pass "
                       "whatever the program does", Loc(filename, 0))
    return count


def parse_stf_text(text: str, filename: str = "<stf>") -> list[StfCommand]:
    """Parse STF source held in a string (``filename`` is used in locations)."""
    commands: list[StfCommand] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            commands.append(_parse_line(line, Loc(filename, lineno)))
    return commands


def _parse_line(line: str, loc: Loc) -> StfCommand:
    word, rest = _split_word(line)
    cmd = word.lower()
    if cmd == "packet":
        port, data = _port_and_data(rest, loc, cmd)
        return Packet(loc, port, _packet_bytes(data, loc))
    if cmd == "expect":
        port, data = _port_and_data(rest, loc, cmd)
        return _expect(port, data, loc)
    if cmd == "add":
        return _table_add(rest, loc)
    if cmd == "setdefault":
        table, call = _split_word(rest)
        action, args, tail = _action_call(call, loc)
        if tail:
            raise StfError(f"unexpected text after the action: {tail!r}", loc)
        return SetDefault(loc, _name(table, loc, "table"), action, args)
    if cmd == "mirroring_add":
        session, port = _ints(rest, loc, cmd, 2)
        return MirroringAdd(loc, session, _check_port(port, loc, cmd))
    if cmd == "mc_mgrp_create":
        (group,) = _ints(rest, loc, cmd, 1)
        return McGroupCreate(loc, group)
    if cmd == "mc_node_create":
        rid, *ports = _ints(rest, loc, cmd, None)
        return McNodeCreate(loc, rid, tuple(_check_port(p, loc, cmd) for p in ports))
    if cmd == "mc_node_associate":
        group, node = _ints(rest, loc, cmd, 2)
        return McNodeAssociate(loc, group, node)
    if cmd == "wait":
        if rest:
            raise StfError("'wait' takes no arguments", loc)
        return Wait(loc)
    if cmd.startswith("act_prof_"):
        return _act_prof(cmd[len("act_prof_"):], rest, loc)
    if cmd in ("table_indirect_add", "table_indirect_add_with_group"):
        return _table_indirect_add(rest, loc, cmd.endswith("_with_group"))
    if cmd in _UNSUPPORTED:
        raise StfError(f"STF command '{cmd}' is not supported", loc)
    raise StfError(f"unknown STF command '{word}'", loc)


def _split_word(text: str) -> tuple[str, str]:
    """The first whitespace-separated word of ``text`` and the rest."""
    words = text.split(None, 1) + ["", ""]
    return words[0], words[1]


def _port_and_data(rest: str, loc: Loc, cmd: str) -> tuple[int, str]:
    port, data = _split_word(rest)
    if not (port.isascii() and port.isdigit()):
        raise StfError(f"'{cmd}' needs a decimal port number, got {port or 'nothing'!r}", loc)
    return _check_port(int(port), loc, cmd), "".join(data.split())


def _check_port(port: int, loc: Loc, cmd: str) -> int:
    if port > MAX_PORT:
        raise StfError(f"'{cmd}': port {port} does not fit v1model's {PORT_BITS}-bit port "
                       f"number (0..{MAX_PORT})", loc)
    return port


def _packet_bytes(data: str, loc: Loc) -> bytes:
    bad = next((c for c in data if c not in _HEX_DIGITS), None)
    if bad is not None:
        raise StfError(f"invalid character {bad!r} in packet data", loc)
    if not data:
        raise StfError("'packet' needs data", loc)
    if len(data) % 2:
        raise StfError(f"packet data has an odd number of hex digits ({len(data)})", loc)
    return bytes.fromhex(data)


def _expect(port: int, data: str, loc: Loc) -> Expect:
    if not data:
        return Expect(loc, port, None)
    exact = data.endswith("$")
    if exact:
        data = data[:-1]
    bad = next((c for c in data if c not in _HEX_DIGITS and c != "*"), None)
    if bad is not None:
        where = " ('$' must end the line)" if bad == "$" else ""
        raise StfError(f"invalid character {bad!r} in expected data{where}", loc)
    if len(data) % 2:
        raise StfError(f"expected data has an odd number of hex digits ({len(data)}): the "
                       "last byte is cut short; is the file truncated?", loc)
    return Expect(loc, port, data.upper(), exact)


def _ints(rest: str, loc: Loc, cmd: str, count: int | None) -> list[int]:
    words = rest.split()
    if (count is not None and len(words) != count) or (count is None and not words):
        want = f"{count} number(s)" if count is not None else "at least one number"
        raise StfError(f"'{cmd}' takes {want}, got {len(words)}", loc)
    return [_number(w, loc) for w in words]


def _number(text: str, loc: Loc) -> int:
    """A P4/STF integer: decimal (leading zeros allowed), ``0x``, ``0b`` or ``0o``."""
    radix = _RADIX.get(text[:2].lower())
    try:
        return int(text[2:], radix[0]) if radix else int(text, 10)
    except ValueError:
        raise StfError(f"invalid number {text!r}", loc) from None


def _name(text: str, loc: Loc, what: str) -> str:
    if not _NAME_RE.match(text):
        raise StfError(f"invalid {what} name {text!r}", loc)
    return text.strip('"')


def _table_add(rest: str, loc: Loc) -> TableAdd:
    paren = rest.find("(")
    if paren < 0:
        raise StfError("'add' needs an action call such as 'act(arg:1)'", loc)
    # Spaces around ':' are insignificant (p4c's lexer skips them).
    head = re.sub(r"\s*:\s*", ":", rest[:paren]).split()
    if len(head) < 2:
        raise StfError("'add' needs a table name and an action", loc)
    table, *words, action = head
    action_text = action + rest[paren:]
    priority = None
    if words and words[0].isdigit():
        priority = int(words.pop(0))
    keys = tuple(_key(w, loc) for w in words)
    action, args, tail = _action_call(action_text, loc)
    if tail and not re.fullmatch(r"=\s*\S+", tail):
        raise StfError(f"unexpected text after the action: {tail!r}", loc)
    # "= HANDLE" names the entry for later commands; none of those is supported.
    return TableAdd(loc, _name(table, loc, "table"), keys, action, args, priority)


def _act_prof(op: str, rest: str, loc: Loc) -> ActProf:
    words = rest.split()
    if not words:
        raise StfError(f"'act_prof_{op}' needs an action profile name", loc)
    profile = _name(words[0], loc, "action profile")
    if op == "create_member":
        if len(words) < 2:
            raise StfError("'act_prof_create_member' needs a profile and an action", loc)
        args = tuple(_number(w, loc) for w in words[2:])
        return ActProf(loc, op, profile, _name(words[1], loc, "action"), args)
    count = _ACT_PROF_HANDLES.get(op)
    if count is None:
        raise StfError(f"unknown STF command 'act_prof_{op}'", loc)
    if len(words) != 1 + count:
        raise StfError(f"'act_prof_{op}' takes a profile and {count} handle(s)", loc)
    return ActProf(loc, op, profile, numbers=tuple(_number(w, loc) for w in words[1:]))


def _table_indirect_add(rest: str, loc: Loc, group: bool) -> TableIndirectAdd:
    head, arrow, tail = rest.partition("=>")
    words, after = head.split(), tail.split()
    if not arrow or not words or len(after) not in (1, 2):
        raise StfError("expected TABLE KEY... => HANDLE [PRIORITY]", loc)
    priority = _number(after[1], loc) if len(after) == 2 else None
    return TableIndirectAdd(loc, _name(words[0], loc, "table"), _number(after[0], loc),
                            group, tuple(words[1:]), priority)


def _key(word: str, loc: Loc) -> StfKey:
    name, sep, text = word.partition(":")
    if not sep or not text:
        raise StfError(f"a key must be NAME:VALUE, got {word!r}", loc)
    name = _name(name, loc, "key")
    if "->" in text:
        # bmv2stf passes the text on to simple_switch_CLI, whose range keys read so.
        low, _, high = text.partition("->")
        return StfKey(name, _number(low, loc), high=_number(high, loc))
    if "&&&" in text:
        value, _, mask = text.partition("&&&")
        return StfKey(name, _number(value, loc), mask=_number(mask, loc))
    if "/" in text:
        value, _, plen = text.partition("/")
        return StfKey(name, _literal(value, loc).value, prefix_len=_number(plen, loc))
    return _literal(text, loc, name)


def _literal(text: str, loc: Loc, name: str = "") -> StfKey:
    radix = _RADIX.get(text[:2].lower())
    if radix is None or "*" not in text:
        value = _number(text, loc)
        if radix is None:
            return StfKey(name, value)
        ndigits = len(text) - 2
        return StfKey(name, value, care_mask=(1 << ndigits * radix[1]) - 1,
                      care_bits=ndigits * radix[1])
    base, bits = radix
    if base == 8:
        raise StfError(f"'*' digits are allowed in hex and binary values only: {text!r}", loc)
    value = care = 0
    for digit in text[2:]:
        value <<= bits
        care <<= bits
        if digit != "*":
            value |= _number(text[:2] + digit, loc)
            care |= (1 << bits) - 1
    return StfKey(name, value, care_mask=care, care_bits=care.bit_count(), has_wildcards=True)


def _action_call(text: str, loc: Loc) -> tuple[str, tuple[tuple[str, int], ...], str]:
    """Split ``name(arg:v, ...) tail`` into name, args and the text after ')'."""
    match = re.fullmatch(r"(\S+?)\s*\(([^)]*)\)\s*(.*)", text)
    if match is None:
        raise StfError(f"malformed action call {text!r}: expected NAME(ARG:VALUE, ...)", loc)
    name, body, tail = match.groups()
    args: list[tuple[str, int]] = []
    for item in filter(None, (part.strip() for part in body.split(","))):
        arg, sep, value = (s.strip() for s in item.partition(":"))
        if not sep or not arg or not value:
            raise StfError(f"an action argument must be NAME:VALUE, got {item!r}", loc)
        args.append((arg, _number(value, loc)))
    return _name(name, loc, "action"), tuple(args), tail.strip()


# --- comparing ------------------------------------------------------------------------------


@dataclass(slots=True)
class StfResult:
    """Outcome of one STF test; ``diff`` is empty when it passed.

    ``unexpected`` counts emitted packets beyond those expected on their port:
    on an observed port that fails the test, elsewhere (ports the test never
    names, which BMv2 would not see) it is only reported.
    """

    passed: bool
    diff: str = ""
    outputs: dict[int, list[bytes]] = field(default_factory=dict)
    packets_in: int = 0
    expected_out: int = 0
    unexpected: int = 0

    @property
    def counts(self) -> str:
        """``12 packets in, 12 expected out, 0 unexpected``, for the PASS line."""
        noun = "packet" if self.packets_in == 1 else "packets"
        return (f"{self.packets_in} {noun} in, {self.expected_out} expected out, "
                f"{self.unexpected} unexpected")

    @property
    def reason(self) -> str:
        """The first line of the diff: what went wrong first."""
        return self.diff.split("\n", 1)[0]


def first_mismatch(nibbles: str | None, exact: bool, data: bytes) -> int | None:
    """Index of the first nibble where ``data`` fails the expectation, or None.

    Mirrors p4c's ``compare_pkt``: ``*`` matches any nibble, a shorter packet
    fails where it ends, and a longer one fails only under ``$``.
    """
    if nibbles is None:
        return None
    actual = data.hex().upper()
    for i, (want, got) in enumerate(zip(nibbles, actual, strict=False)):
        if want != "*" and want != got:
            return i
    if len(actual) < len(nibbles) or (exact and len(actual) > len(nibbles)):
        return min(len(actual), len(nibbles))
    return None


def compare_outputs(
    expects: Iterable[Expect], outputs: Mapping[int, Sequence[bytes]], ports: Iterable[int] = ()
) -> StfResult:
    """Judge ``outputs`` against ``expects`` port by port.

    ``ports`` are further observed ports (those of ``packet`` lines), which
    must stay silent unless expected; ports neither expected nor in ``ports``
    are not looked at.
    """
    wanted: dict[int, list[Expect]] = {}
    for exp in expects:
        wanted.setdefault(exp.port, []).append(exp)
    expected_out = sum(len(exps) for exps in wanted.values())
    unexpected = sum(max(0, len(pkts) - len(wanted.get(port, ())))
                     for port, pkts in outputs.items())
    failures: list[tuple[str, list[str]]] = []
    for port in sorted(set(wanted) | set(ports)):
        got = list(outputs.get(port, ()))
        failure = _compare_port(port, wanted.get(port, []), got)
        if failure is not None:
            failures.append(failure)
    seen = {port: list(pkts) for port, pkts in outputs.items()}
    if not failures:
        return StfResult(True, "", seen, expected_out=expected_out, unexpected=unexpected)
    head = failures[0][0] if len(failures) == 1 else (
        f"{failures[0][0]} (and {len(failures) - 1} more port(s) differ)")
    lines = [head]
    for _, detail in failures:
        lines.extend(detail)
    return StfResult(False, "\n".join(lines), seen, expected_out=expected_out,
                     unexpected=unexpected)


def _compare_port(
    port: int, wanted: list[Expect], got: list[bytes]
) -> tuple[str, list[str]] | None:
    """None when the port is right, else (headline, detail lines)."""
    mismatches = ((i, first_mismatch(e.nibbles, e.exact, p)) for i, (e, p) in
                  enumerate(zip(wanted, got, strict=False)))
    bad = [(i, nib) for i, nib in mismatches if nib is not None]
    if len(wanted) == len(got) and not bad:
        return None
    if len(wanted) != len(got):
        head = f"port {port}: expected {len(wanted)} packet(s), got {len(got)}"
    else:
        i, nib = bad[0]
        fault = _fault(wanted[i], got[i], nib)
        head = f"port {port}: packet {i} {fault} (line {wanted[i].loc.line})"
    detail = [f"port {port}:"]
    for i in range(max(len(wanted), len(got))):
        exp = wanted[i] if i < len(wanted) else None
        pkt = got[i] if i < len(got) else None
        detail.extend(_describe(i, exp, pkt))
    return head, detail


def _describe(index: int, exp: Expect | None, pkt: bytes | None) -> list[str]:
    if exp is None:
        return [f"  #{index} unexpected", f"    actual:   {_spaced(pkt.hex().upper())}"]
    shown = "(any packet)" if exp.nibbles is None else _spaced(exp.nibbles) + (
        " $" if exp.exact else "")
    if pkt is None:
        return [f"  #{index} missing (line {exp.loc.line})", f"    expected: {shown}"]
    nib = first_mismatch(exp.nibbles, exp.exact, pkt)
    status = "ok" if nib is None else _fault(exp, pkt, nib)
    lines = [f"  #{index} {status} (line {exp.loc.line})", f"    expected: {shown}",
             f"    actual:   {_spaced(pkt.hex().upper())}"]
    if nib is not None:
        lines.append("              " + " " * (3 * (nib // 2)) + "^^")
    return lines


def _fault(exp: Expect, pkt: bytes, nib: int) -> str:
    """Words for a mismatch at nibble ``nib`` (as ``first_mismatch`` reports it)."""
    if nib >= 2 * len(pkt):
        return f"ends early, at byte {len(pkt)}"
    if exp.exact and exp.nibbles is not None and nib == len(exp.nibbles):
        return f"goes on past the expected end ($), from byte {nib // 2}"
    return f"differs at byte {nib // 2}"


def _spaced(nibbles: str) -> str:
    return " ".join(nibbles[i:i + 2] for i in range(0, len(nibbles), 2))


# --- running --------------------------------------------------------------------------------


def run_stf(program: CompiledProgram, stf_path: str | Path) -> StfResult:
    """Run an STF test on a fresh Switch and judge what it emitted."""
    # Imported here: parsing STF needs none of the engine, which is slow to import.
    from dataplane.runtime.switch import Switch

    commands = parse_stf(stf_path)
    packets_in = require_packets(commands, str(stf_path))
    switch = Switch(program)
    outputs: dict[int, list[bytes]] = {}
    expects: list[Expect] = []
    ports: set[int] = set()
    for cmd in commands:
        if isinstance(cmd, Packet):
            ports.add(cmd.port)
            for port, data in switch.process(cmd.port, cmd.data):
                outputs.setdefault(port, []).append(data)
        elif isinstance(cmd, Expect):
            expects.append(cmd)
        else:
            apply_command(switch, program.schema, cmd)
    result = compare_outputs(expects, outputs, ports)
    result.packets_in = packets_in
    return result


def apply_command(switch: Switch, schema: ProgramSchema, cmd: StfCommand) -> None:
    """Carry out a control-plane command (not ``packet``/``expect``) on ``switch``.

    Names are resolved against ``schema`` the way bmv2stf resolves them, and
    a request the Switch refuses becomes an StfError at the command's line.
    """
    try:
        if isinstance(cmd, TableAdd):
            table = _find_table(schema, cmd.table, cmd.loc)
            matches = {f.name: _match_spec(f, k, cmd.loc)
                       for k in cmd.keys for f in [_find_field(table, k.name, cmd.loc)]}
            action = _find_action(schema, table, cmd.action, cmd.args, cmd.loc)
            switch.table_add(table.name, matches, action, dict(cmd.args), cmd.priority)
        elif isinstance(cmd, SetDefault):
            table = _find_table(schema, cmd.table, cmd.loc)
            action = _find_action(schema, table, cmd.action, cmd.args, cmd.loc)
            switch.table_set_default(table.name, action, dict(cmd.args))
        elif isinstance(cmd, MirroringAdd):
            switch.mirroring_add(cmd.session, cmd.port)
        elif isinstance(cmd, McGroupCreate):
            switch.mc_group_create(cmd.group)
        elif isinstance(cmd, McNodeCreate):
            switch.mc_node_create(cmd.rid, cmd.ports)
        elif isinstance(cmd, McNodeAssociate):
            switch.mc_node_associate(cmd.group, cmd.node)
        elif isinstance(cmd, ActProf):
            _apply_act_prof(switch, schema, cmd)
        elif isinstance(cmd, TableIndirectAdd):
            table = _find_table(schema, cmd.table, cmd.loc)
            fields = [f for f in table.match_fields if f.match_type != "selector"]
            if len(cmd.keys) != len(fields):
                raise StfError(f"table {table.name} needs {len(fields)} key(s), "
                               f"got {len(cmd.keys)}", cmd.loc)
            matches = {f.name: _cli_key(f, text, cmd.loc) for f, text in zip(fields, cmd.keys)}
            ref = IndirectRef.group(cmd.handle) if cmd.group else IndirectRef.member(cmd.handle)
            switch.table_add(table.name, matches, ref, priority=cmd.priority)
        elif not isinstance(cmd, Wait):
            raise StfError(f"not a control-plane command: {type(cmd).__name__}", cmd.loc)
    except StfError:
        raise
    except IntbedError as exc:
        raise StfError(exc.message, cmd.loc) from exc


def _apply_act_prof(switch: Switch, schema: ProgramSchema, cmd: ActProf) -> None:
    name = pick_name(cmd.profile, (p.name for p in schema.action_profiles), "action profile",
                     cmd.loc)
    profile = switch.action_profile(name)
    if cmd.op == "create_member":
        info = next(p for p in schema.action_profiles if p.name == name)
        refs = {r.action for t in schema.tables if t.name in info.tables
                for r in t.action_refs}
        action = pick_name(cmd.action, refs, "action", cmd.loc, f"of action profile {name}")
        switch.act_prof_create_member(name, action, cmd.numbers)
    elif cmd.op == "delete_member":
        profile.delete_member(*cmd.numbers)
    elif cmd.op == "create_group":
        profile.create_group()
    elif cmd.op == "delete_group":
        profile.delete_group(*cmd.numbers)
    elif cmd.op == "add_member_to_group":
        profile.add_to_group(cmd.numbers[1], cmd.numbers[0])
    else:
        profile.remove_from_group(cmd.numbers[1], cmd.numbers[0])


def _cli_key(field_info: MatchFieldInfo, text: str, loc: Loc) -> MatchSpec:
    """One key as simple_switch_CLI reads it, for the field's match kind."""
    kind = field_info.match_type
    if "->" in text and kind == "range":
        low, _, high = text.partition("->")
        return RangeMatch(_number(low, loc), _number(high, loc))
    if "&&&" in text and kind == "ternary":
        value, _, mask = text.partition("&&&")
        return Ternary(_number(value, loc) & _number(mask, loc), _number(mask, loc))
    if "/" in text and kind == "lpm":
        value, _, plen = text.partition("/")
        return Lpm(_number(value, loc), _number(plen, loc))
    if kind not in ("exact", "optional") or not re.fullmatch(r"(0[xXbBoO])?[0-9a-fA-F]+", text):
        raise StfError(f"key {field_info.name} ({kind}): cannot read {text!r}", loc)
    return Exact(_number(text, loc))


def pick_name(name: str, candidates: Iterable[str], what: str, loc: Loc, where: str = "") -> str:
    """``common.names.lookup`` (exact name, else the one candidate ending in
    ``.name``), its error located at the STF line."""
    try:
        return lookup(name, candidates, what, where)
    except NameLookupError as exc:
        raise StfError(exc.message, loc) from None


def _find_table(schema: ProgramSchema, name: str, loc: Loc) -> TableInfo:
    full = pick_name(name, (t.name for t in schema.tables), "table", loc)
    return next(t for t in schema.tables if t.name == full)


def _find_field(table: TableInfo, name: str, loc: Loc) -> MatchFieldInfo:
    by_name = {f.name: f for f in table.match_fields}
    name = re.sub(r"\$(\d+)", r"[\1]", name)  # bmv2stf writes stack indices as h$0
    spellings = [name, name + "$", name + ".$valid$"]
    if name.endswith(".valid"):
        spellings.append(name[: -len("valid")] + "$valid$")
    for spelling in spellings:
        hits = [n for n in by_name if n.endswith("." + spelling)]
        if spelling in by_name or len(hits) == 1:
            return by_name.get(spelling) or by_name[hits[0]]
    return by_name[pick_name(name, by_name, "key field", loc, f"in table {table.name}")]


def _find_action(
    schema: ProgramSchema, table: TableInfo, name: str, args: Sequence[tuple[str, int]], loc: Loc
) -> str:
    full = pick_name(name, (r.action for r in table.action_refs), "action", loc,
                     f"in table {table.name}")
    info = next((a for a in schema.actions if a.name == full), None)
    if info is not None:
        params = {p.name for p in info.params}
        given = [a for a, _ in args]
        unknown = [a for a in given if a not in params]
        if unknown:
            raise StfError(f"action {full} has no parameter '{unknown[0]}'", loc)
        missing = sorted(params - set(given))
        if missing:
            raise StfError(f"action {full} needs parameter(s) {', '.join(missing)}", loc)
    return full


def _match_spec(field_info: MatchFieldInfo, key: StfKey, loc: Loc) -> MatchSpec:
    """The Switch match spec for one key, read as bmv2stf reads bare literals.

    Value bits outside a ternary mask or an lpm prefix are cleared, as BMv2
    ignores them when it stores the entry.
    """
    kind, width = field_info.match_type, field_info.bitwidth
    full = (1 << width) - 1
    where = f"key {field_info.name} ({kind})"
    mask, prefix_len = key.mask, key.prefix_len
    if mask is not None and kind != "ternary":
        raise StfError(f"{where}: 'V&&&MASK' is for ternary keys", loc)
    if prefix_len is not None and kind != "lpm":
        raise StfError(f"{where}: 'V/LEN' is for lpm keys", loc)
    if key.high is not None:
        if kind != "range":
            raise StfError(f"{where}: 'LOW->HIGH' is for range keys", loc)
        return RangeMatch(key.value, key.high)
    if kind == "ternary" and mask is None:
        mask = key.care_mask
    if kind == "lpm" and prefix_len is None and key.care_bits is not None:
        prefix_len = min(width, key.care_bits)
    if mask is not None:
        return Ternary(key.value & mask & full, mask & full)
    if prefix_len is not None:
        return Lpm(key.value & full & ~(full >> prefix_len), prefix_len)
    if key.has_wildcards:
        raise StfError(f"{where}: '*' digits are for ternary and lpm keys", loc)
    return Exact(key.value)


# --- conformance ----------------------------------------------------------------------------


def find_conformance_cases(directory: str | Path) -> list[Path]:
    """Every ``NAME.p4`` in ``directory`` that has a ``NAME.stf`` beside it, sorted."""
    return sorted(p for p in Path(directory).glob("*.p4") if p.with_suffix(".stf").is_file())


def run_conformance_case(p4_path: Path) -> tuple[str, bool, str]:
    """Compile ``NAME.p4`` and run ``NAME.stf``: ``(name, passed, first line of
    reason)``, the reason of a pass being its counts (``StfResult.counts``).

    A compile error or an engine crash is a failure with its message as the
    reason, so one broken program cannot stop a whole conformance run.
    """
    from dataplane.compiler.pipeline import compile_file

    try:
        result = run_stf(compile_file(p4_path), p4_path.with_suffix(".stf"))
    except IntbedError as exc:
        return p4_path.stem, False, _first_line(str(exc))
    except Exception as exc:  # an engine bug must not abort the other cases
        return p4_path.stem, False, _first_line(f"internal error: {type(exc).__name__}: {exc}")
    return p4_path.stem, result.passed, result.reason if not result.passed else result.counts


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]
