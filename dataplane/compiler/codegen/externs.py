"""Extern objects and extern functions: v1model's registers, counters,
meters, action profiles, value sets, hashes, checksums (the inline
Internet checksum and CRC), clone/resubmit/recirculate, digests and
logging, and the externs a program declares itself (bound to plugins at
run time). Apart because this is where intbed follows BMv2's v1model
extern by extern, each one's schema entry and its code together."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataplane import schema as sc
from dataplane.compiler.codegen.values import LValue, Val, const, py_tuple, slot
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import ExternFuncSym, InstanceSym, Scope, ValueSetSym
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    EnumT,
    ExternT,
    StructLikeT,
    StructT,
    Type,
    VoidT,
    field_bits,
    strip,
)
from dataplane.contract import reflected_crc

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


def _word(v: Val) -> bool:
    """Whether ``v`` always fits an unsigned 64-bit machine word."""
    t = strip(v.type)
    if v.is_const:
        return isinstance(v.const, int) and not isinstance(v.const, bool) \
            and 0 <= v.const < 1 << 64
    return isinstance(t, BitT) and not t.signed and t.width <= 64


class ExternMixin:
    """Extern instance, method and function compilation for CodeGen."""

    # ------------------------------------------------------------ instances

    def instantiate_extern(self: CodeGen, d: ast.Instantiation, t: Type, prefix: str,
                           scope: Scope) -> InstanceSym:
        from dataplane.compiler.codegen.generator import ExternRuntime

        if not isinstance(t, ExternT):
            raise self.err(d, f"cannot instantiate {t}")
        qname = self.control_name(d, prefix)
        saved = self.scope
        self.scope = scope
        try:
            args = [self.ev(a.value) for a in d.args]
        finally:
            self.scope = saved
        kind = t.name
        ctors = [m for m in getattr(t.decl, "methods", []) if m.name == kind
                 and m.return_type is None]
        if ctors and not any(_arity_fits(m.params, len(d.args)) for m in ctors):
            counts = sorted({len(m.params) for m in ctors})
            raise self.err(d, f"{kind} takes {' or '.join(map(str, counts))} constructor "
                              f"argument(s), got {len(d.args)}")
        annos = self.anno_texts(d.annotations)
        ext = ExternRuntime(kind, qname)

        def enum_name(v: Val) -> str:
            et = strip(v.type)
            if isinstance(et, EnumT):
                return next(m for m, x in et.values.items() if x == v.const)
            raise self.err(d, f"expected an enum constant in the {kind} constructor")

        if kind == "register":
            ext.size = int(args[0].const)
            vt = strip(t.args[0]) if t.args else BitT(32)
            ext.width = field_bits(vt)
            ext.signed = isinstance(vt, BitT) and vt.signed
            self.schema.registers.append(sc.RegisterInfo(qname, ext.width, ext.size, ext.signed,
                                                         annos))
        elif kind == "counter":
            ext.size = int(args[0].const)
            ext.unit = enum_name(args[1]).upper()
            self.schema.counters.append(sc.CounterInfo(qname, ext.unit, ext.size,
                                                       annotations=annos))
        elif kind == "direct_counter":
            ext.unit = enum_name(args[0]).upper()
            self.schema.direct_counters.append(sc.CounterInfo(qname, ext.unit,
                                                              annotations=annos))
        elif kind == "meter":
            ext.size = int(args[0].const)
            ext.unit = enum_name(args[1]).upper()
            self.schema.meters.append(sc.MeterInfo(qname, ext.unit, ext.size, annotations=annos))
        elif kind == "direct_meter":
            ext.unit = enum_name(args[0]).upper()
            self.schema.direct_meters.append(sc.MeterInfo(qname, ext.unit, annotations=annos))
        elif kind == "action_profile":
            ext.size = int(args[0].const)
            self.schema.action_profiles.append(sc.ActionProfileInfo(
                qname, ext.size, annotations=annos))
        elif kind == "action_selector":
            ext.size = int(args[1].const)
            ext.width = int(args[2].const)
            ext.unit = enum_name(args[0])
            self.schema.action_profiles.append(sc.ActionProfileInfo(
                qname, ext.size, ext.unit, ext.width, annotations=annos))
        elif _user_declared(t.decl):
            ext.kind = f"user:{kind}"
            self.user_externs.setdefault(kind, ("object", d.loc))
            if any(not a.is_const for a in args):
                raise self.err(d, f"the arguments of extern '{kind}' must be constants")
            ext.ctor_args = tuple(a.const for a in args)
        else:
            raise self.unsupported(d, f"extern object '{kind}'")
        sym = InstanceSym(t, qname, d, len(self.externs), scope)
        self.externs.append(ext)
        return sym

    def bind_direct(self: CodeGen, inst: InstanceSym, table: str) -> None:
        for group in (self.schema.direct_counters, self.schema.direct_meters):
            for info in group:
                if info.name == inst.qname:
                    info.table = table

    def declare_value_set(self: CodeGen, d: ast.ValueSetDecl, scope: Scope,
                          prefix: str) -> ValueSetSym:
        t = self.resolve_type(d.type, scope)
        size = self.const_int(d.size, scope)
        sym = ValueSetSym(d, self.control_name(d, prefix), t, len(self.value_sets))
        fields = _value_set_fields(t)
        self.value_sets.append((sym.qname, [(n, w) for n, w, _ in fields], size))
        self.schema.value_sets.append(sc.ValueSetInfo(
            sym.qname, [sc.MatchFieldInfo(n, w, kind, i + 1) for i, (n, w, kind) in
                        enumerate(fields)], size))
        return sym

    # -------------------------------------------------------------- methods

    def extern_method(self: CodeGen, sym: InstanceSym, name: str, e: ast.Call,
                      want: Type | None) -> Val:
        kind = strip(sym.type).name  # type: ignore[union-attr]
        ref = f"E{sym.index}"
        if any(a.name for a in e.args):
            decl = getattr(strip(sym.type), "decl", None)
            methods = [m for m in getattr(decl, "methods", []) if m.name == name]
            args = self.named_args(methods, e)
        else:
            args = [a.value for a in e.args]
        # A program without main has no standard metadata: its code is
        # checked, never run, so any length will do there.
        plen_slot = self.layout.std_fields.get("packet_length")
        plen = slot(plen_slot) if plen_slot is not None else "0"
        if kind == "register":
            vt = strip(sym.type).args[0] if strip(sym.type).args else BitT(32)  # type: ignore[union-attr]
            reg = self.externs[sym.index]
            # An unsigned register's cells are read and written in place
            # (RVk is its value list): BMv2's rules, as RegisterArray.read
            # and .write apply them, without a call per packet.
            inline = not reg.signed
            if name == "read":
                lv = self.lval(args[0])
                idx = self.ev(args[1], BitT(32))
                if inline:
                    self.register_lists.add(sym.index)
                    i = self.fresh("i")
                    self.index_local(i, idx)
                    self.w(f"{i} = {idx.code}")
                    with self.w.block(f"if {i} < {reg.size}"):  # out of range: unchanged
                        self.store(lv, Val(vt, code=f"RV{sym.index}[{i}]"))
                    return Val(VoidT())
                cur = self.read_lvalue(lv)
                self.store(lv, Val(vt, code=f"{ref}.read({idx.code}, {cur.code})"))
                return Val(VoidT())
            if name == "write":
                idx = self.ev(args[0], BitT(32))
                v = self.coerce(self.ev(args[1], vt), vt, args[1])
                if inline:
                    self.register_lists.add(sym.index)
                    i, x = self.fresh("i"), self.fresh("x")
                    self.index_local(i, idx)
                    self.w(f"{i} = {idx.code}")
                    self.w(f"{x} = {v.code}")
                    # A bit<W> value is always within W bits (every
                    # expression of the type is masked to it), so a value of
                    # the register's own unsigned type is stored as it is.
                    st = strip(v.type)
                    fits = isinstance(st, BitT) and not st.signed and st.width <= reg.width
                    value = x if fits else f"{x} & {(1 << reg.width) - 1}"
                    with self.w.block(f"if {i} < {reg.size}"):  # out of range: nothing
                        self.w(f"RV{sym.index}[{i}] = {value}")
                    return Val(VoidT())
                self.w(f"{ref}.write({idx.code}, {v.code})")
                return Val(VoidT())
        if kind == "counter" and name == "count":
            idx = self.ev(args[0], BitT(32))
            self.w(f"{ref}.count({idx.code}, {plen})")
            return Val(VoidT())
        if kind == "direct_counter" and name == "count":
            return Val(VoidT())
        if kind == "meter" and name == "execute_meter":
            idx = self.ev(args[0], BitT(32))
            lv = self.lval(args[1])
            tmp = self.fresh("c")
            self.w(f"{tmp} = {ref}.execute({idx.code}, {plen}, NOW())")
            with self.w.block(f"if {tmp} is not None"):
                self.store(lv, Val(lv.type, code=tmp))
            return Val(VoidT())
        if kind == "direct_meter" and name == "read":
            lv = self.lval(args[0])
            self.store(lv, Val(lv.type, code="s[7]"))
            return Val(VoidT())
        if self.externs[sym.index].kind.startswith("user:"):
            decl = strip(sym.type).decl  # type: ignore[union-attr]
            method = next((m for m in decl.methods if m.name == name
                           and len(m.params) == len(e.args)), None)
            if method is None:
                raise self.err(e, f"extern '{kind}' has no method '{name}' taking "
                                  f"{len(e.args)} arguments")
            return self.call_user_extern(f"{ref}.{name}", method.params, method.return_type,
                                         e, want)
        raise self.unsupported(e, f"method {kind}.{name}")

    def index_local(self: CodeGen, name: str, idx: Val) -> None:
        """Compiled, a register index of an unsigned type narrower than a
        machine word is one (``Py_ssize_t``): the cells (a typed list, RVk)
        are then read and written by a C item access, not by the list's
        subscript method with an integer object."""
        st = strip(idx.type)
        if isinstance(st, BitT) and not st.signed and st.width <= 62:
            self.w.ctypes[name] = "cython.Py_ssize_t"

    def payload_read(self: CodeGen) -> str:
        """A read of the payload slot (6: contract.PAYLOAD), noted so that
        the engine fills that slot for this program."""
        self.reads_payload = True
        return "s[6]"

    # ------------------------------------------------------------ functions

    def fast_csum16(self: CodeGen, name: str, args: list[ast.Expr]) -> bool:
        """Inline the Internet checksum of a list of plain fields: the
        ones'-complement sum of the 16-bit words of an integer ``v`` is
        ``v mod 0xffff`` (2**16 = 1 mod 0xffff), with 0xffff for a non-zero
        multiple. The same congruence lets each field stand shifted by its
        bit offset modulo 16 instead of in place: the sum of a few small
        integers, not a 160-bit concatenation (IPv4), has the same residue
        and is zero exactly when every field is. Returns False when the
        general path is needed."""
        if self.algo_name(args[3]) != "csum16" or not isinstance(args[1], ast.ListExpr):
            return False
        fields = [self.ev(x) for x in args[1].elems]
        if not all(f.parts is None and isinstance(strip(f.type), BitT | BoolT) for f in fields):
            return False
        values = []
        for f in fields:
            ft = strip(f.type)
            w = 1 if isinstance(ft, BoolT) else ft.width  # type: ignore[union-attr]
            code = f.code if isinstance(ft, BitT) and not ft.signed else f"({f.code} & "\
                f"{(1 << w) - 1})"
            values.append((code, w))
        total = sum(w for _, w in values)
        offset = (-total) % 16  # the zero bits that pad the list to whole words
        shifted = []
        for code, w in reversed(values):
            shifted.append((code, w, offset % 16))
            offset += w
        shifted.reverse()
        # The compiled fast path sums in a machine word when no term or sum
        # can reach 2**64: each field in a C local, so no integer objects.
        typed = sum(((1 << w) - 1) << k for _, w, k in shifted) < 1 << 64
        c = self.ev(args[0], BoolT())
        v = self.fresh("v")
        with self.w.block(f"if {c.code}"):
            terms = []
            for code, _, k in shifted:
                if typed:
                    code = self.word_local(code, "f")
                terms.append(f"(({code}) << {k})" if k else f"({code})")
            if typed:
                self.w.ctypes[v] = "cython.ulonglong"
            self.w(f"{v} = {' + '.join(terms)}")
            ck = f"(65535 - (({v} % 65535) or (65535 if {v} else 0)))"
            if name == "verify_checksum":
                target = self.ev(args[2])
                tt = strip(target.type)
                held = target.code
                if typed and isinstance(tt, BitT) and not tt.signed and tt.width <= 64:
                    # Compared in a machine word: the sum is one, and an
                    # object comparison would box it (a new integer a packet).
                    held = self.word_local(target.code, "f")
                cerr = self.layout.std_fields.get("checksum_error")
                with self.w.block(f"if {ck} != {held}"):
                    if cerr is not None:
                        self.w(f"s[{cerr}] = 1")
            else:
                lv = self.lval(args[2])
                width = field_bits(strip(lv.type))
                self.store(lv, Val(lv.type, code=ck if width >= 16 else f"({ck} & "
                                                                         f"{(1 << width) - 1})"))
        return True

    def inline_crc_hash(self: CodeGen, algo: str,
                        runs: list[tuple[str | None, list[tuple[str, int]]]],
                        base: str, mx: str, width: int) -> str:
        """``hash_bytes`` of a reflected CRC over whole-byte fields, for the
        compiled fast path: the register shifted bit by bit over each
        field's big-endian bytes in machine words (no packed bytes, no table
        and no integer objects), then ``base + h % max`` in 64-bit unsigned
        arithmetic as BMv2 computes it. Returns the local holding the
        result."""
        crc = reflected_crc(algo)
        assert crc is not None  # the caller checked
        poly, init, xor_out = crc
        word = "cython.ulonglong"
        h, k, j = self.fresh("h"), self.fresh("k"), self.fresh("j")
        p, x, m = self.fresh("p"), self.fresh("x"), self.fresh("m")
        self.w.ctypes.update({h: word, k: "cython.Py_ssize_t", j: "cython.Py_ssize_t",
                              p: word, x: word, m: word})
        # Constants in typed locals: Cython gives a literal above 2**31 the
        # type of a Python int, which would take the whole expression out of
        # machine words (and out of their 64-bit wrap).
        self.w(f"{h} = {init}")
        self.w(f"{p} = {poly}")
        self.w(f"{x} = {xor_out}")
        self.w(f"{m} = {(1 << min(width, 64)) - 1}")
        for valid, fields in runs:
            with self.w.block(f"if {valid}") if valid is not None else nullcontext():
                for code, bits in fields:
                    f = self.word_local(code, "w")
                    with self.w.block(f"for {k} in range({bits - 8}, -1, -8)"):
                        self.w(f"{h} ^= ({f} >> {k}) & 255")
                        with self.w.block(f"for {j} in range(8)"):
                            self.w(f"{h} = ({h} >> 1) ^ ({p} if {h} & 1 else 0)")
        size, b, r = self.fresh("z"), self.fresh("b"), self.fresh("r")
        self.w.ctypes.update({size: word, b: word, r: word})
        self.w(f"{size} = {mx}")
        with self.w.block(f"if {size} == 0"):
            self.w(f"{size} = 1")
        self.w(f"{b} = {base}")
        # Unsigned C arithmetic wraps modulo 2**64, as BMv2's uint64 does.
        self.w(f"{r} = (({h} ^ {x}) % {size} + {b}) & {m}")
        return r

    def algo_name(self: CodeGen, e: ast.Expr) -> str:
        v = self.ev(e)
        t = strip(v.type)
        if not isinstance(t, EnumT) or not v.is_const:
            raise self.err(e, "hash algorithm must be a HashAlgorithm constant")
        return next(m for m, x in t.values.items() if x == v.const)

    def extern_function(self: CodeGen, name: str, sym: ExternFuncSym, e: ast.Call,
                        want: Type | None) -> Val:
        args = self.named_args(sym.overloads, e) if any(a.name for a in e.args) else [
            a.value for a in e.args]
        if not any(_arity_fits(o.params, len(args)) for o in sym.overloads):
            counts = sorted({len(o.params) for o in sym.overloads})
            raise self.err(e, f"{name} takes {' or '.join(map(str, counts))} argument(s), "
                              f"got {len(args)}")
        std = self.layout.std_fields
        void = Val(VoidT())
        if name == "mark_to_drop":
            if args:
                lv = self.lval(args[0])
                st = strip(lv.type)
                assert isinstance(st, StructT)
                self.w(f"{slot(lv.base, st.offsets['egress_spec'])} = 511")
                if "mcast_grp" in st.offsets:
                    self.w(f"{slot(lv.base, st.offsets['mcast_grp'])} = 0")
            else:
                self.w(f"s[{std['egress_spec']}] = 511")
                self.w(f"s[{std['mcast_grp']}] = 0")
            return void
        if name == "verify":
            c = self.ev(args[0], BoolT())
            err = self.ev(args[1])
            with self.w.block(f"if not {c.code}"):
                self.w(f"raise ParserReject({err.code})")
            return void
        if name == "random":
            lv = self.lval(args[0])
            lo = self.coerce(self.ev(args[1], lv.type), lv.type, args[1])
            hi = self.coerce(self.ev(args[2], lv.type), lv.type, args[2])
            cur = self.read_lvalue(lv)
            self.store(lv, Val(lv.type, code=f"RAND({lo.code}, {hi.code}, {cur.code})"))
            return void
        if name == "hash":
            lv = self.lval(args[0])
            algo = self.algo_name(args[1])
            if algo == "random":
                raise self.internal(args[1], "HashAlgorithm.random in hash()")
            base = self.ev(args[2])
            elems = args[3].elems if isinstance(args[3], ast.ListExpr) else []
            vals = [self.ev(x) for x in elems] or None
            runs = self.byte_fields(elems, vals) if vals else None
            mx = self.ev(args[4])
            width = field_bits(strip(lv.type))
            if runs is not None:
                call = (f"hash_bytes({algo!r}, {self.packed_fields(runs)}, {base.code}, "
                        f"{mx.code}, {width})")
                if reflected_crc(algo) is not None and lv.slice is None and _word(base) \
                        and _word(mx):
                    with self.w.block("if cython.compiled"):
                        r = self.inline_crc_hash(algo, runs, base.code, mx.code, width)
                        self.store(lv, Val(lv.type, code=r))
                    with self.w.block("else"):
                        self.store(lv, Val(lv.type, code=call))
                    return void
            else:
                data = self.field_list(args[3], vals)
                call = f"compute_hash({algo!r}, {data}, {base.code}, {mx.code}, {width})"
            self.store(lv, Val(lv.type, code=call))
            return void
        if name in ("verify_checksum", "update_checksum"):
            fast = self.fast_csum16(name, args)
            if fast:
                return void
        if name in ("verify_checksum", "verify_checksum_with_payload"):
            c = self.ev(args[0], BoolT())
            data = self.field_list(args[1])
            ck = self.ev(args[2])
            algo = self.algo_name(args[3])
            payload = self.payload_read() if name.endswith("payload") else "b''"
            cerr = std.get("checksum_error")
            with self.w.block(f"if {c.code} and not verify_checksum({algo!r}, {data}, "
                              f"{ck.code}, {payload})"):
                if cerr is not None:
                    self.w(f"s[{cerr}] = 1")
            return void
        if name in ("update_checksum", "update_checksum_with_payload"):
            c = self.ev(args[0], BoolT())
            data = self.field_list(args[1])
            lv = self.lval(args[2])
            algo = self.algo_name(args[3])
            payload = self.payload_read() if name.endswith("payload") else "b''"
            width = field_bits(strip(lv.type))
            with self.w.block(f"if {c.code}"):
                self.store(lv, Val(lv.type, code=f"update_checksum({algo!r}, {data}, {width}, "
                                                 f"{payload})"))
            return void
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            sess = self.ev(args[1], BitT(32))
            self.w(f"s[1] = ({sess.code} & 4294967295) + 1")
            if name == "clone_preserving_field_list":
                fl = self.const_int(args[2])
                self.w(f"s[2] = {fl + 1}")
            else:
                self.w("s[2] = 0")
            return void
        if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            fl = self.const_int(args[0])
            self.w(f"s[{3 if name.startswith('resubmit') else 4}] = {fl + 1}")
            return void
        if name in ("resubmit", "recirculate"):
            self.w(f"s[{3 if name == 'resubmit' else 4}] = -1")
            return void
        if name == "truncate":
            # BMv2 keeps the smallest length asked for (slot holds length + 1).
            n = self.ev(args[0], BitT(32))
            self.w(f"s[5] = min(s[5] - 1, {n.code}) + 1 if s[5] else {n.code} + 1")
            return void
        if name == "digest":
            data_t = self.resolve_type(e.type_args[0]) if e.type_args else None
            data = self.ev(args[1], data_t)
            if data_t is not None:
                data = self.coerce(data, data_t, args[1])
            dt = strip(data.type)
            dname = dt.name if isinstance(dt, StructLikeT) else f"digest_{len(self.digests)}"
            if dname not in self.digests:
                self.digests[dname] = len(self.digests)
                fields = [sc.FieldInfo(n, _digest_bits(ft)) for n, ft in dt.fields] if isinstance(
                    dt, StructLikeT) else [sc.FieldInfo("value", _digest_bits(dt))]
                self.schema.digests.append(sc.DigestInfo(dname, fields))
            self.w(f"DIGEST({self.digests[dname]}, {py_tuple(self.flat(data))})")
            return void
        if name in ("assert", "assume"):
            c = self.ev(args[0], BoolT())
            with self.w.block(f"if not {c.code}"):
                self.w(f"raise AssertionFailed({str(e.loc)!r})")
            return void
        if name == "log_msg":
            msg = self.ev(args[0])
            if len(args) > 1:
                data = self.ev(args[1])
                self.w(f"LOG({msg.code}, {py_tuple(self.flat(data))})")
            else:
                self.w(f"LOG({msg.code}, ())")
            return void
        if name == "static_assert":
            c = self.ev(args[0])
            if not c.is_const:
                raise self.err(e, "static_assert needs a constant condition")
            if not c.const:
                msg = self.ev(args[1]).const if len(args) > 1 else "static assertion failed"
                raise self.err(e, str(msg))
            return const(BoolT(), True)
        decl = sym.overloads[0]
        if _user_declared(decl):
            k = self.user_functions.setdefault(name, len(self.user_functions))
            self.user_externs.setdefault(name, ("function", e.loc))
            return self.call_user_extern(f"UF{k}", decl.params, decl.return_type, e, want)
        raise self.unsupported(e, f"extern function '{name}'")

    def call_user_extern(self: CodeGen, fn: str, params: list[ast.Param],
                         return_type: ast.TypeRef | None, e: ast.Call,
                         want: Type | None) -> Val:
        """A call to an extern the program declares itself, bound at run time
        to a plugin (``dataplane/runtime/plugins.py``): the in and inout
        values go in, the return value and the out/inout values come back."""
        args = self.bind_args(params, e.args, e)  # named or positional, defaults filled
        missing = [p.name for p, a in zip(params, args) if a is None]
        if missing:
            raise self.err(e, f"argument '{missing[0]}' is left out: a plugin extern "
                              "takes every argument")
        inputs: list[str] = []
        outputs: list[tuple[LValue, Type]] = []
        for p, a in zip(params, args):
            t = self.resolve_type(p.type, self.scope)
            if p.direction in ("out", "inout"):
                lv = self.lval(a)
                outputs.append((lv, t))
                if p.direction == "inout":
                    inputs.append(self.read_lvalue(lv).code)
            else:
                v = self.coerce(self.ev(a, t), t, a)
                inputs.append(v.code if v.parts is None else py_tuple(self.flat(v)))
        rt = self.resolve_type(return_type, self.scope) if return_type is not None else VoidT()
        results: list[tuple[LValue | None, Type]] = []
        if not isinstance(strip(rt), VoidT):
            results.append((None, rt))
        results += outputs
        call = f"{fn}({', '.join(inputs)})"
        if not results:
            self.w(call)
            return Val(VoidT())
        tmp = self.fresh("x")
        self.w(f"{tmp} = {call}")
        codes = [tmp] if len(results) == 1 else [f"{tmp}[{i}]" for i in range(len(results))]
        ret = Val(VoidT())
        for (lv, t), code in zip(results, codes):
            st = strip(t)
            value = f"(({code}) & {st.mask})" if isinstance(st, BitT) else code
            if lv is None:
                ret = Val(t, code=value)
            else:
                self.store(lv, Val(t, code=value))
        return ret


def _value_set_fields(t: Type, prefix: str = "") -> list[tuple[str, int, str]]:
    """(name, width, match kind) of a value set's key: one field for a bit
    type; a struct's fields in order, nested structs flattened into dotted
    names, each field's kind from its ``@match`` annotation (exact when
    none), as select keys line up with them."""
    st = strip(t)
    if not isinstance(st, StructT):
        return [(prefix, field_bits(st), "exact")]
    out: list[tuple[str, int, str]] = []
    for fname, ft in st.fields:
        name = f"{prefix}{fname}"
        if isinstance(strip(ft), StructT):
            out.extend(_value_set_fields(ft, name + "."))
            continue
        kind = "exact"
        for a in st.annotations.get(fname, []):
            if a.name == "match":
                kind = (a.body or "exact").strip()
        out.append((name, field_bits(ft), kind))
    return out


def _arity_fits(params: list[ast.Param], n: int) -> bool:
    """Whether ``n`` positional arguments can bind ``params`` (parameters
    with a default or ``@optional`` may be left out)."""
    needed = sum(1 for p in params if p.default is None
                 and not any(a.name == "optional" for a in p.annotations))
    return needed <= n <= len(params)


def _user_declared(decl: Any) -> bool:
    """An extern the program declares itself, not one of v1model's or core's."""
    from dataplane.compiler.frontend.preprocess import builtin_include_dir

    file = getattr(getattr(decl, "loc", None), "file", None)
    if not file:
        return False
    try:
        return Path(file).resolve().parent != builtin_include_dir()
    except OSError:
        return True


def _digest_bits(t: Type) -> int:
    """A digest field's width in P4Info: an enum without an underlying type
    travels as 32 bits, as p4c's BMv2 back end represents it."""
    st = strip(t)
    if isinstance(st, EnumT) and st.underlying is None:
        return 32
    return field_bits(st)
