"""P4-16 parser: preprocessed text -> ``ast.Program``.

Three parts, all driven by one LALR(1) pass of lark over ``grammar.lark``:

* ``_Lexer`` turns the text into tokens. It follows cpp's ``# N "file"``
  line markers so every token (and so every AST node) carries its original
  file, line and column. Like p4c's lexer it keeps a scoped table of names
  and returns TYPE_IDENT for identifiers that name a type in scope (typedefs,
  headers, structs, enums, externs, parsers, controls, packages, type
  parameters) and IDENT otherwise; objects (variables, constants,
  parameters, instances) shadow types. It also tells a `<` that opens type
  arguments from a less-than (see the grammar's header).
* Grammar callbacks (``_Builder``) build AST nodes as rules reduce, with no
  intermediate parse tree. A few of them declare names: lark reduces a rule
  when it sees the next token, so a declaration is known before the lexer
  reads the token after that one, which is all the lookahead P4 needs
  (p4c's bison parser relies on the same timing).
* ``parse_text`` / ``parse_file`` wrap it, and turn lark's errors into
  P4SyntaxError with the original ``file:line:col``.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from lark import Lark, Transformer
from lark.exceptions import UnexpectedInput, UnexpectedToken
from lark.lexer import Lexer, Token

from common.errors import IntbedError, Loc, P4SemanticError, P4SyntaxError, P4UnsupportedError
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.preprocess import preprocess

__all__ = ["parse_file", "parse_text"]

# ------------------------------------------------------------------ tokens

# Reserved words (spec appendix "P4 reserved keywords", plus the contextual
# ones p4c's lexer always returns as keywords: actions, entries, key, priority).
_KEYWORDS = {
    kw: kw.upper()
    for kw in [
        "abstract", "action", "actions", "apply", "bool", "bit", "break", "const",
        "continue", "control", "default", "else", "entries", "enum", "error", "exit",
        "extern", "false", "for", "header", "header_union", "if", "in", "inout", "int",
        "key", "list", "match_kind", "out", "package", "parser", "priority", "return",
        "select", "state", "string", "struct", "switch", "table", "this", "transition",
        "true", "tuple", "type", "typedef", "varbit", "void",
    ]
}  # fmt: skip
_KEYWORDS["value_set"] = "VALUESET"
_KEYWORDS["_"] = "DONTCARE"

# Keywords after which `<` opens type arguments (p4c: template_args = true).
_TEMPLATE_KEYWORDS = frozenset({"BIT", "INT", "VARBIT", "TUPLE", "LIST", "VALUESET"})

_OPERATORS = {
    "&&&": "MASK", "...": "DOTS", "..": "RANGE", "|+|=": "ASSIGN_OP", "|-|=": "ASSIGN_OP",
    "|+|": "PLUS_SAT", "|-|": "MINUS_SAT", "{#}": "INVALID", "&&": "AND", "||": "OR",
    "==": "EQ", "!=": "NE", "++": "PP", "+=": "ASSIGN_OP", "-=": "ASSIGN_OP",
    "*=": "ASSIGN_OP", "/=": "ASSIGN_OP", "%=": "ASSIGN_OP", "&=": "ASSIGN_OP",
    "|=": "ASSIGN_OP", "^=": "ASSIGN_OP", "+:": "PLUS_COLON", "+": "PLUS", "-": "MINUS",
    "*": "MUL", "/": "DIV", "%": "MOD", "|": "BOR", "&": "BAND", "^": "BXOR", "~": "COMPL",
    "!": "NOT", "(": "LPAREN", ")": "_RPAREN", "[": "_LBRACK", "]": "_RBRACK",
    "{": "LBRACE", "}": "_RBRACE", ":": "_COLON", ",": "_COMMA", "?": "_QUESTION",
    ".": "_DOT", "=": "_ASSIGN", ";": "_SEMI",
}  # fmt: skip

_SCAN = re.compile(
    r"""
      (?P<ws>[ \t\r\f\v\n]+)
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<num>[0-9]+[ws](?:0[xX][0-9a-fA-F_]+|0[dD][0-9_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9_]+)
            | 0[xX][0-9a-fA-F_]+ | 0[dD][0-9_]+ | 0[oO][0-7_]+ | 0[bB][01_]+ | [0-9][0-9_]*)
    | (?P<lc>//[^\n]*)
    | (?P<bc>/\*)
    | (?P<str>")
    | (?P<ann>@)
    | (?P<hash>\#)
    | (?P<lt><)
    | (?P<gt>>)
    | (?P<op>&&&|\.\.\.|\.\.|\|[+-]\|=?|\{\#\}|&&|\|\||==|!=|\+\+|[-+*/%&|^]=|\+:
            |[-+*/%|&^~!()\[\]{}:,?.=;])
    | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
_LINE_MARKER = re.compile(r'#[ \t]*(?:line[ \t]+)?([0-9]+)(?:[ \t]+"((?:[^"\\\n]|\\.)*)")?[^\n]*')
_DIRECTIVE = re.compile(r"#[^\n]*")
_ANN_NAME = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
_ANN_OPEN = re.compile(r"[ \t\r\n]*([(\[])")
_ANN_PIECE = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|//[^\n]*|[()\[\]]|[^"()\[\]/]+|/', re.DOTALL)
# `@pragma name tokens...` runs to the end of the line; a string may span lines.
_PRAGMA_REST = re.compile(r'[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*((?:"(?:[^"\\]|\\.)*"|[^"\n])*)')
_PEEK_WORD = re.compile(r"[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*(.?)", re.DOTALL)
# Words that can start a type but never an expression.
_TYPE_START_WORDS = frozenset(
    {"bit", "int", "varbit", "bool", "string", "tuple", "list", "void", "match_kind", "_"}
)
_INT_LIT = re.compile(r"(?:(?P<w>[0-9]+)(?P<s>[ws]))?(?:0(?P<b>[xXdDoObB]))?(?P<d>[0-9a-fA-F_]+)")
_BASES = {"x": 16, "d": 10, "o": 8, "b": 2}
_SIMPLE_STRING_BODY = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s*')
_SIMPLE_INT_BODY = re.compile(r"\s*([0-9][0-9a-fA-FxXdDoObBws_]*)\s*")

# A `.` right after one of these is a member access; anywhere else it starts
# an absolute name (`.NoAction`), looked up at the top level.
_MEMBER_DOT_AFTER = frozenset({
    "IDENT", "TYPE_IDENT", "_RPAREN", "_RBRACK", "_RANGLE", "ERROR", "THIS", "APPLY",
    "KEY", "ACTIONS", "ENTRIES", "PRIORITY", "STATE", "TYPE", "LIST",
})  # fmt: skip

# Symbol kinds in a scope.
_OBJECT, _TEMPLATE_OBJECT, _TYPE = 0, 1, 2


class P4Token(Token):
    """A lark token that also knows its original file (after line markers)
    and, for literals and annotations, a decoded payload."""

    __slots__ = ("file", "data")

    @property
    def loc(self) -> Loc:
        return Loc(self.file, self.line, self.column)


def _token(kind: str, text: str, file: str, line: int, col: int, data: Any = None) -> P4Token:
    tok = str.__new__(P4Token, text)
    tok.type = kind
    tok.value = text
    tok.start_pos = None
    tok.line = line
    tok.column = col
    tok.end_line = None
    tok.end_column = None
    tok.end_pos = None
    tok.file = file
    tok.data = data
    return tok


class _Scope:
    """Names declared in one scope. ``decl`` scopes hold a declaration's type
    parameters and parameters; they end at the `;` or the `}` that ends the
    declaration (``base``/``nest`` are the brace and paren depth it lives at).
    Other scopes are brace blocks."""

    __slots__ = ("names", "decl", "base", "nest", "body_open")

    def __init__(self, decl: bool, base: int, nest: int) -> None:
        self.names: dict[str, int] = {}
        self.decl = decl
        self.base = base
        self.nest = nest
        self.body_open = False


class _Lexer:
    """Tokenizer for one parse: position tracking through line markers, the
    scoped symbol table, and the angle-bracket state."""

    def __init__(
        self,
        text: str,
        filename: str,
        *,
        line: int = 1,
        col: int = 1,
        root: _Scope | None = None,
        template_members: set[str] | None = None,
    ) -> None:
        self.text = text
        self.file = filename
        self.root = root if root is not None else _Scope(False, 0, 0)
        self.scopes: list[_Scope] = [self.root]
        self.template_members = template_members if template_members is not None else set()
        self.pending: _Scope | None = None  # decl scope awaiting its params
        self.last: P4Token | None = None  # the lookahead, at reduction time
        self.prev: P4Token | None = None  # the token before it
        self.annotations: list[tuple[ast.Annotation, str, Loc]] = []
        # Position: physical line number and start offset of the current
        # line; original line = physical line + delta. ``col0`` shifts the
        # columns of the first line (annotation bodies start mid-line).
        self._line_delta = line - 1
        self._col0 = col - 1
        # Original source lines by file, to undo cpp's whitespace collapsing
        # in columns (None: columns are taken as they are in ``text``).
        self._sources: dict[str, list[str] | None] | None = {} if root is None else None

    # --------------------------------------------------------- symbol table

    def lookup(self, name: str) -> int | None:
        for scope in reversed(self.scopes):
            kind = scope.names.get(name)
            if kind is not None:
                return kind
        return None

    def declare_type(self, name: str) -> None:
        """Types are declared at the top level only (P4 has no nested types)."""
        self.root.names[name] = _TYPE

    def declare_object(self, name: str, template: bool = False) -> None:
        self.scopes[-1].names[name] = _TEMPLATE_OBJECT if template else _OBJECT

    def lookahead_opens(self) -> tuple[bool, bool]:
        """(is `<`, is `(`) for the lookahead token of the rule being reduced."""
        kind = self.last.type if self.last is not None else ""
        return kind in ("LT", "_LT_ARGS"), kind == "LPAREN"

    def push_decl_scope(self) -> None:
        """Open the scope of the declaration whose head was just reduced. The
        lookahead (`<` or `(`) has been read already: a `(` has bumped the
        paren depth, which the scope must not count."""
        nest = self._nest - (1 if self.last is not None and self.last.type == "LPAREN" else 0)
        scope = _Scope(True, self._depth, nest)
        self.scopes.append(scope)
        self.pending = scope

    def declare_pending(self, names: Sequence[str], kind: int) -> None:
        """Declare type parameters or parameters in the open declaration."""
        scope = self.pending
        if scope is not None and scope in self.scopes:
            for n in names:
                scope.names[n] = kind

    def _close_decls(self) -> None:
        scopes = self.scopes
        while len(scopes) > 1:
            top = scopes[-1]
            if not top.decl or top.base < self._depth:
                break
            scopes.pop()
            if top is self.pending:
                self.pending = None

    # ------------------------------------------------------------- tokens

    def _column_map(self, line_start: int, line: int) -> list[int] | None:
        """Map columns of the preprocessed line at ``line_start`` to columns of
        the original line (cpp squeezes runs of blanks between tokens), or
        None when they agree or the original is not readable."""
        sources = self._sources
        lines = sources.get(self.file, ())
        if lines == ():
            try:
                lines = Path(self.file).read_text(errors="replace").split("\n")
            except OSError:
                lines = None
            sources[self.file] = lines
        if lines is None or not 0 < line <= len(lines):
            return None
        end = self.text.find("\n", line_start)
        out = self.text[line_start : end if end >= 0 else len(self.text)]
        orig = lines[line - 1]
        if out == orig:
            return None
        return _align_columns(out, orig)

    def tokens(self) -> Iterator[P4Token]:
        text = self.text
        n = len(text)
        scan = _SCAN.match
        keywords = _KEYWORDS
        operators = _OPERATORS
        pos = 0
        phys = 1  # physical line number
        line_start = 0
        col0 = self._col0
        self._depth = 0
        self._nest = 0
        map_start = -1  # the line `colmap` belongs to
        colmap: list[int] | None = None
        angles: list[int] = []  # paren depth of each open type-argument list
        tmpl = False  # may the next `<` open type arguments?
        dot = 0  # 1: previous token is a member `.`, 2: an absolute `.`
        kind = ""
        while pos < n:
            m = scan(text, pos)
            group = m.lastgroup
            start = pos
            pos = m.end()
            if group == "ws":
                nl = text.count("\n", start, pos)
                if nl:
                    phys += nl
                    line_start = text.rfind("\n", start, pos) + 1
                    col0 = 0
                continue
            col = start - line_start + 1 + col0
            line = phys + self._line_delta
            if line_start != map_start:
                map_start = line_start
                colmap = self._column_map(line_start, line) if self._sources is not None else None
            if colmap is not None:
                col = colmap[col - 1] + 1
            if group == "id":
                word = m.group()
                kind = keywords.get(word, "")
                if kind:
                    tmpl = kind in _TEMPLATE_KEYWORDS
                elif dot == 1:
                    kind = "IDENT"
                    tmpl = word in self.template_members
                else:
                    sym = self.root.names.get(word) if dot == 2 else self.lookup(word)
                    if sym == _TYPE:
                        kind = "TYPE_IDENT"
                        tmpl = True
                    else:
                        kind = "IDENT"
                        tmpl = sym == _TEMPLATE_OBJECT
                dot = 0
                tok = _token(kind, word, self.file, line, col)
            elif group == "op":
                word = m.group()
                kind = operators[word]
                tmpl = False
                if kind == "_DOT":
                    dot = 1 if self.last is not None and self.last.type in _MEMBER_DOT_AFTER else 2
                else:
                    dot = 0
                    if kind == "LPAREN" or kind == "_LBRACK":
                        self._nest += 1
                    elif kind == "_RPAREN" or kind == "_RBRACK":
                        self._nest -= 1
                        while angles and angles[-1] > self._nest:
                            angles.pop()  # unclosed: that `<` was no type list
                    elif kind == "LBRACE":
                        for scope in self.scopes[::-1]:
                            if not scope.decl:
                                break
                            if scope.base == self._depth and scope.nest == self._nest:
                                scope.body_open = True
                        self._depth += 1
                        self.scopes.append(_Scope(False, self._depth, self._nest))
                    elif kind == "_RBRACE":
                        self._close_decls()
                        if len(self.scopes) > 1:
                            self.scopes.pop()
                        self._depth -= 1
                        top = self.scopes[-1]
                        if top.decl and top.base >= self._depth and top.body_open:
                            self._close_decls()
                    elif kind == "_SEMI":
                        angles.clear()
                        top = self.scopes[-1]
                        if top.decl and top.base >= self._depth and top.nest >= self._nest:
                            self._close_decls()
                tok = _token(kind, word, self.file, line, col)
            elif group == "num":
                word = m.group()
                tmpl = False
                dot = 0
                tok = _token("INTEGER", word, self.file, line, col)
            elif group == "lt":
                dot = 0
                if tmpl or (
                    self.last is not None
                    and self.last.type == "IDENT"
                    and self._type_args_follow(start + 1)
                ):
                    kind = "_LT_ARGS"
                    angles.append(self._nest)
                    word = "<"
                elif text.startswith("<<=", start):
                    kind, word = "ASSIGN_OP", "<<="
                elif text.startswith("<<", start):
                    kind, word = "SHL", "<<"
                elif text.startswith("<=", start):
                    kind, word = "LE", "<="
                else:
                    kind, word = "LT", "<"
                pos = start + len(word)
                tmpl = False
                tok = _token(kind, word, self.file, line, col)
            elif group == "gt":
                dot = 0
                tmpl = False
                if angles and angles[-1] == self._nest:
                    angles.pop()
                    kind, word = "_RANGLE", ">"
                elif text.startswith(">>=", start):
                    kind, word = "ASSIGN_OP", ">>="
                elif text.startswith(">>", start):
                    kind, word = "SHR", ">>"
                elif text.startswith(">=", start):
                    kind, word = "GE", ">="
                else:
                    kind, word = "GT", ">"
                pos = start + len(word)
                tok = _token(kind, word, self.file, line, col)
            elif group == "lc":
                continue
            elif group == "bc":
                end = text.find("*/", pos)
                if end < 0:
                    raise P4SyntaxError("unterminated comment", Loc(self.file, line, col))
                pos = end + 2
                nl = text.count("\n", start, pos)
                if nl:
                    phys += nl
                    line_start = text.rfind("\n", start, pos) + 1
                    col0 = 0
                continue
            elif group == "str":
                sm = _STRING.match(text, start)
                if sm is None:
                    raise P4SyntaxError("unterminated string literal", Loc(self.file, line, col))
                pos = sm.end()
                tmpl = False
                dot = 0
                tok = _token("STRING_LIT", sm.group(), self.file, line, col, sm.group(1))
                nl = text.count("\n", start, pos)
                if nl:
                    phys += nl
                    line_start = text.rfind("\n", start, pos) + 1
                    col0 = 0
            elif group == "ann":
                tok, pos = self._annotation(start, pos, line, col, line_start, col0, colmap)
                nl = text.count("\n", start, pos)
                if nl:
                    phys += nl
                    line_start = text.rfind("\n", start, pos) + 1
                    col0 = 0
                tmpl = False
                dot = 0
            elif group == "hash":
                at_line_start = not text[line_start:start].strip()
                mm = _LINE_MARKER.match(text, start) if at_line_start else None
                if mm is not None:
                    # `# N "file"`: the next physical line is line N of file.
                    pos = mm.end()
                    self._line_delta = int(mm.group(1)) - (phys + 1)
                    if mm.group(2) is not None:
                        self.file = mm.group(2)
                    continue
                if at_line_start:  # another directive cpp left in (#pragma ...)
                    pos = _DIRECTIVE.match(text, start).end()
                    continue
                raise P4SyntaxError("unexpected character '#'", Loc(self.file, line, col))
            else:
                raise P4SyntaxError(
                    f"unexpected character {m.group()!r}", Loc(self.file, line, col)
                )
            self.prev = self.last
            self.last = tok
            yield tok

    def _type_args_follow(self, pos: int) -> bool:
        """After a name not known to be generic, does `<` open type arguments
        (``x.m<bit<8>>()``, p4c decides this after the `<`)? Yes when a type
        follows: a type keyword, or a type name not used as a value."""
        m = _PEEK_WORD.match(self.text, pos)
        if m is None:
            return False
        word, after = m.groups()
        if word in _TYPE_START_WORDS:
            return True
        if word == "error":
            return after != "."  # `error.X` is a value
        return after in (">", ",", "<", "[") and self.lookup(word) == _TYPE

    def _annotation(
        self,
        start: int,
        pos: int,
        line: int,
        col: int,
        line_start: int,
        col0: int,
        colmap: list[int] | None,
    ) -> tuple[P4Token, int]:
        """Lex ``@name``, ``@name(body)``, ``@name[body]`` or ``@pragma name
        rest-of-line`` as one ANNOTATION token; the body stays raw text."""
        text = self.text
        loc = Loc(self.file, line, col)
        nm = _ANN_NAME.match(text, pos)
        if nm is None:
            raise P4SyntaxError("expected an annotation name after '@'", loc)
        name = nm.group(1)
        pos = nm.end()
        if name == "pragma":
            pm = _PRAGMA_REST.match(text, pos)
            if pm is None:
                raise P4SyntaxError("expected a pragma name after '@pragma'", loc)
            ann = ast.Annotation(pm.group(1), pm.group(2).strip() or None, loc=loc)
            return _token("ANNOTATION", "@pragma", self.file, line, col, ann), pm.end()
        body = None
        om = _ANN_OPEN.match(text, pos)
        if om is not None:
            opener = om.group(1)
            closer = ")" if opener == "(" else "]"
            body_start = om.end()
            depth = 1
            p = body_start
            while depth:
                piece = _ANN_PIECE.match(text, p)
                if piece is None:
                    raise P4SyntaxError(f"unterminated annotation @{name}", loc)
                s = piece.group()
                if s == opener:
                    depth += 1
                elif s == closer:
                    depth -= 1
                p = piece.end()
            body = text[body_start : p - 1]
            # Where the body starts, for locations of its parsed arguments.
            bl = text.count("\n", line_start, body_start)
            bstart = text.rfind("\n", 0, body_start) + 1 if bl else line_start
            bcol = body_start - bstart + 1 + (col0 if not bl else 0)
            if colmap is not None and not bl:
                bcol = colmap[bcol - 1] + 1
            body_loc = Loc(self.file, line + bl, bcol)
            pos = p
        ann = ast.Annotation(name, body, loc=loc)
        if body is not None:
            if name == "p4runtime_translation":
                _check_translation(body, body_loc)
            self.annotations.append((ann, body, body_loc))
        return _token("ANNOTATION", "@" + name, self.file, line, col, ann), pos


_TRANSLATION = re.compile(r'^\s*"[^"]*"\s*,\s*(bit\s*<\s*\d+\s*>|string|\d+)\s*$')


def _check_translation(body: str, loc: Loc) -> None:
    """``@p4runtime_translation("uri", T)``: P4-16 takes T as ``bit<W>``
    with a literal W, ``string``, or an integer (the width); p4c's grammar
    refuses anything else, so a typo never reaches P4Info."""
    if _TRANSLATION.match(body) is None:
        raise P4SyntaxError(
            f"@p4runtime_translation({body.strip()}): expected a URI string, then bit<W> with "
            "a literal width, string, or an integer", loc)


def _align_columns(out: str, orig: str) -> list[int]:
    """Offsets in ``orig`` of each offset of ``out`` (plus one past the end),
    where ``out`` is ``orig`` with blank runs resized. Past a real difference
    (a macro expansion) offsets keep the last known shift."""
    blanks = " \t"
    result: list[int] = []
    i = j = 0
    n_out, n_orig = len(out), len(orig)
    while i < n_out:
        if out[i] in blanks:
            run = j
            while j < n_orig and orig[j] in blanks:
                j += 1
            while i < n_out and out[i] in blanks:
                result.append(run)
                i += 1
            continue
        while j < n_orig and orig[j] in blanks:
            j += 1
        if j >= n_orig or orig[j] != out[i]:
            break
        result.append(j)
        i += 1
        j += 1
    shift = j - i
    result.extend(k + shift for k in range(i, n_out + 1))
    return result


# ------------------------------------------------------------ lark binding


class _LarkLexer(Lexer):
    """Adapter: lark hands us the ``_Lexer`` we passed as the parse input."""

    __future_interface__ = 2

    def __init__(self, lexer_conf: Any) -> None:
        pass

    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[P4Token]:
        return lexer_state.text.tokens()


_current = threading.local()  # the _Lexer of the parse running on this thread


def _lexer() -> _Lexer:
    return _current.lexer


def _annos(value: list[ast.Annotation] | None) -> list[ast.Annotation]:
    return value if value is not None else []


def _int_literal(tok: P4Token) -> ast.IntLit:
    """``[W(w|s)][0x|0d|0o|0b]digits`` with ``_`` separators (spec "Integer literals")."""
    m = _INT_LIT.fullmatch(tok)
    if m is None:
        raise P4SyntaxError(f"malformed integer literal '{tok}'", tok.loc)
    base = _BASES[m["b"].lower()] if m["b"] else 10
    digits = m["d"].replace("_", "")
    try:
        value = int(digits, base)
    except ValueError:
        raise P4SyntaxError(f"malformed integer literal '{tok}'", tok.loc) from None
    width = None
    signed = False
    if m["w"] is not None:
        width = int(m["w"])
        signed = m["s"] == "s"
    return ast.IntLit(value, width, signed, loc=tok.loc)


class _Builder(Transformer):
    """Grammar callbacks: one method per rule or alias, children in grammar
    order (``_``-terminals dropped, ``[x]`` absent -> None)."""

    # ----------------------------------------------------------- program

    def program(self, ch: list) -> ast.Program:
        decls: list[ast.Decl] = []
        for d in ch:
            if isinstance(d, list):  # typedef struct S {...} T;
                decls.extend(d)
            elif d is not None:
                decls.append(d)
        return ast.Program(decls)

    def annotation_args(self, ch: list) -> list[ast.Expr]:
        return ch

    def annotations(self, ch: list[P4Token]) -> list[ast.Annotation]:
        return [t.data for t in ch]

    def path(self, ch: list) -> ast.Name:
        tok = ch[0]
        return ast.Name(str(tok), loc=tok.loc)

    def abs_path(self, ch: list) -> ast.Name:
        tok = ch[0]
        return ast.Name(str(tok), absolute=True, loc=tok.loc)

    def type_params(self, ch: list[P4Token]) -> list[str]:
        names = [str(t) for t in ch if t.type not in ("LT", "GT")]
        _lexer().declare_pending(names, _TYPE)
        return names

    # ------------------------------------------------------------- types

    def stack_type(self, ch: list) -> ast.StackType:
        return ast.StackType(ch[0], ch[1], loc=ch[0].loc)

    def type_name(self, ch: list) -> ast.TypeName:
        return ast.TypeName(str(ch[0]), loc=ch[0].loc)

    def abs_type_name(self, ch: list) -> ast.TypeName:
        return ast.TypeName(str(ch[0]), absolute=True, loc=ch[0].loc)

    def specialized_type(self, ch: list) -> ast.SpecializedType:
        return ast.SpecializedType(ch[0], ch[1], loc=ch[0].loc)

    def bit_type(self, ch: list) -> ast.BitType:
        loc = ch[0].loc
        width = ch[1] if len(ch) > 1 else ast.IntLit(1, loc=loc)
        return ast.BitType(width, loc=loc)

    def int_type(self, ch: list) -> ast.TypeRef:
        loc = ch[0].loc
        if len(ch) > 1:
            return ast.BitType(ch[1], signed=True, loc=loc)
        return ast.IntType(loc=loc)

    def varbit_type(self, ch: list) -> ast.VarbitType:
        return ast.VarbitType(ch[1], loc=ch[0].loc)

    def bool_type(self, ch: list) -> ast.BoolType:
        return ast.BoolType(loc=ch[0].loc)

    def string_type(self, ch: list) -> ast.StringType:
        return ast.StringType(loc=ch[0].loc)

    def named_base_type(self, ch: list) -> ast.TypeName:
        return ast.TypeName(str(ch[0]), loc=ch[0].loc)

    def tuple_type(self, ch: list) -> ast.TupleType:
        return ast.TupleType(ch[1], loc=ch[0].loc)

    def list_type(self, ch: list) -> ast.SpecializedType:
        loc = ch[0].loc
        return ast.SpecializedType(ast.TypeName("list", loc=loc), [ch[1]], loc=loc)

    def type_var(self, ch: list) -> ast.TypeName:
        return ast.TypeName(str(ch[0]), loc=ch[0].loc)

    def void_type(self, ch: list) -> ast.VoidType:
        return ast.VoidType(loc=ch[0].loc)

    def dontcare_type(self, ch: list) -> ast.DontCareType:
        return ast.DontCareType(loc=ch[0].loc)

    def type_arg_list(self, ch: list) -> list[ast.TypeRef]:
        return ch

    real_type_arg_list = type_arg_list

    # -------------------------------------------------- type declarations

    def _type_head(self, ch: list) -> tuple[list[ast.Annotation], P4Token]:
        """``[annotations] KEYWORD name``: declare the type; a following `<`
        opens its type-parameter scope."""
        name = ch[2]
        lex = _lexer()
        lex.declare_type(str(name))
        if lex.lookahead_opens()[0]:
            lex.push_decl_scope()
        return _annos(ch[0]), name

    header_head = union_head = struct_head = _type_head

    def _fields(self, cls: type, ch: list) -> ast.Decl:
        (annos, name), tparams = ch[0], ch[1]
        fields = ch[3:]
        return cls(str(name), fields, tparams or [], annotations=annos, loc=name.loc)

    def header_decl(self, ch: list) -> ast.HeaderDecl:
        return self._fields(ast.HeaderDecl, ch)

    def union_decl(self, ch: list) -> ast.HeaderUnionDecl:
        return self._fields(ast.HeaderUnionDecl, ch)

    def struct_decl(self, ch: list) -> ast.StructDecl:
        return self._fields(ast.StructDecl, ch)

    def struct_field(self, ch: list) -> ast.StructField:
        annos, type_, name = ch[0], ch[1], ch[2]
        for size in ch[3:]:
            type_ = ast.StackType(type_, size, loc=type_.loc)
        return ast.StructField(type_, str(name), _annos(annos), loc=name.loc)

    def enum_head(self, ch: list) -> tuple[list[ast.Annotation], P4Token]:
        name = ch[2]
        _lexer().declare_type(str(name))
        return _annos(ch[0]), name

    def ser_enum_head(self, ch: list) -> tuple[list[ast.Annotation], ast.TypeRef, P4Token]:
        name = ch[3]
        _lexer().declare_type(str(name))
        return _annos(ch[0]), ch[2], name

    def enum_decl(self, ch: list) -> ast.EnumDecl:
        annos, name = ch[0]
        members = [str(t) for t in ch[2:]]
        return ast.EnumDecl(
            str(name), members, None, [None] * len(members), annotations=annos, loc=name.loc
        )

    def ser_enum_decl(self, ch: list) -> ast.EnumDecl:
        annos, underlying, name = ch[0]
        members = [str(m[0]) for m in ch[2:]]
        values = [m[1] for m in ch[2:]]
        return ast.EnumDecl(str(name), members, underlying, values, annotations=annos, loc=name.loc)

    def enum_member(self, ch: list) -> tuple[P4Token, ast.Expr]:
        return ch[0], ch[1]

    def typedef_core(self, ch: list, newtype: bool = False) -> ast.Typedef:
        name = ch[3]
        _lexer().declare_type(str(name))
        return ast.Typedef(str(name), ch[2], newtype, annotations=_annos(ch[0]), loc=name.loc)

    def newtype_core(self, ch: list) -> ast.Typedef:
        return self.typedef_core(ch, newtype=True)

    def typedef_derived(self, ch: list) -> list[ast.Decl]:
        """``typedef struct S {...} T;`` declares S, then T as S."""
        decl, name = ch[2], ch[3]
        _lexer().declare_type(str(name))
        alias = ast.Typedef(
            str(name),
            ast.TypeName(decl.name, loc=decl.loc),
            annotations=_annos(ch[0]),
            loc=name.loc,
        )
        return [decl, alias]

    def typedef_decl(self, ch: list) -> ast.Typedef | list[ast.Decl]:
        return ch[0]

    def error_decl(self, ch: list) -> ast.ErrorDecl:
        return ast.ErrorDecl("error", [str(t) for t in ch[2:]], loc=ch[0].loc)

    def match_kind_decl(self, ch: list) -> ast.MatchKindDecl:
        return ast.MatchKindDecl("match_kind", [str(t) for t in ch[2:]], loc=ch[0].loc)

    # --------------------------------------------------------- parameters

    def params(self, ch: list) -> list[ast.Param]:
        return ch

    def param(self, ch: list) -> ast.Param:
        annos, direction, type_, name, default = ch
        return ast.Param(
            str(direction) if direction is not None else "",
            type_,
            str(name),
            default,
            _annos(annos),
            loc=name.loc,
        )

    def decl_params(self, ch: list) -> list[ast.Param]:
        params = ch[1]
        _lexer().declare_pending([p.name for p in params], _OBJECT)
        return params

    def ctor_params(self, ch: list) -> list[ast.Param]:
        return ch[1]

    # ------------------------------------------------------------ externs

    def extern_obj_head(self, ch: list) -> tuple[list[ast.Annotation], P4Token]:
        return self._type_head(ch)

    def extern_obj(self, ch: list) -> ast.ExternDecl:
        (annos, name), tparams = ch[0], ch[1]
        return ast.ExternDecl(str(name), ch[3:], tparams or [], annotations=annos, loc=name.loc)

    def extern_func(self, ch: list) -> ast.ExternFunctionDecl:
        ret, name, tparams, params = ch[2]
        return ast.ExternFunctionDecl(
            str(name), ret, params, tparams, annotations=_annos(ch[0]), loc=name.loc
        )

    def extern_fwd(self, ch: list) -> None:
        _lexer().declare_type(str(ch[2]))
        return None

    def method(self, ch: list) -> ast.MethodDecl:
        ret, name, tparams, params = ch[2]
        return ast.MethodDecl(
            str(name),
            ret,
            params,
            tparams,
            ch[1] is not None,
            annotations=_annos(ch[0]),
            loc=name.loc,
        )

    def ctor(self, ch: list) -> ast.MethodDecl:
        name = ch[1]
        return ast.MethodDecl(str(name), None, ch[3], annotations=_annos(ch[0]), loc=name.loc)

    def function_head(self, ch: list) -> tuple[ast.TypeRef, P4Token]:
        """``R name``: declare the function (generic when `<` follows) and
        open the scope of its type parameters and parameters."""
        ret, name = ch
        lex = _lexer()
        angle, paren = lex.lookahead_opens()
        lex.declare_object(str(name), template=angle)
        if angle and lex._depth > 0:  # a generic method: `obj.m<T>(...)`
            lex.template_members.add(str(name))
        if angle or paren:
            lex.push_decl_scope()
        return ret, name

    def function_proto(self, ch: list) -> tuple[ast.TypeRef, P4Token, list[str], list]:
        (ret, name), tparams, params = ch
        return ret, name, tparams or [], params

    def function_decl(self, ch: list) -> ast.FunctionDecl:
        ret, name, tparams, params = ch[1]
        return ast.FunctionDecl(
            str(name), ret, params, ch[2], tparams, annotations=_annos(ch[0]), loc=name.loc
        )

    # ------------------------------------------ parsers, controls, packages

    def _block_head(self, ch: list) -> tuple[list[ast.Annotation], P4Token]:
        name = ch[2]
        lex = _lexer()
        lex.declare_type(str(name))
        angle, paren = lex.lookahead_opens()
        if angle or paren:
            lex.push_decl_scope()
        return _annos(ch[0]), name

    parser_head = control_head = package_head = _block_head

    def _type_head_full(self, ch: list) -> tuple:
        (annos, name), tparams, params = ch
        return annos, name, tparams or [], params

    parser_type_head = control_type_head = _type_head_full

    def parser_type_decl(self, ch: list) -> ast.ParserTypeDecl:
        annos, name, tparams, params = ch[0]
        return ast.ParserTypeDecl(str(name), params, tparams, annotations=annos, loc=name.loc)

    def control_type_decl(self, ch: list) -> ast.ControlTypeDecl:
        annos, name, tparams, params = ch[0]
        return ast.ControlTypeDecl(str(name), params, tparams, annotations=annos, loc=name.loc)

    def package_decl(self, ch: list) -> ast.PackageTypeDecl:
        (annos, name), tparams, params = ch
        return ast.PackageTypeDecl(
            str(name), params, tparams or [], annotations=annos, loc=name.loc
        )

    def parser_decl(self, ch: list) -> ast.ParserDecl:
        annos, name, tparams, params = ch[0]
        body = ch[3:]
        states = [d for d in body if isinstance(d, ast.ParserState)]
        local_decls = [d for d in body if not isinstance(d, ast.ParserState)]
        return ast.ParserDecl(
            str(name), params, ch[1] or [], local_decls, states, tparams,
            annotations=annos, loc=name.loc,
        )  # fmt: skip

    def parser_state(self, ch: list) -> ast.ParserState:
        name = ch[2]
        return ast.ParserState(str(name), ch[4:-1], ch[-1], annotations=_annos(ch[0]), loc=name.loc)

    def transition_direct(self, ch: list) -> ast.Transition:
        loc = ch[0].loc
        target = ch[1]
        case = ast.SelectCase(
            ast.Keyset([ast.Default(loc=target.loc)], loc=target.loc), str(target), loc=target.loc
        )
        return ast.Transition([], [case], loc=loc)

    def transition_select(self, ch: list) -> ast.Transition:
        exprs, cases = ch[1]
        return ast.Transition(exprs, cases, loc=ch[0].loc)

    def select_expr(self, ch: list) -> tuple[list[ast.Expr], list[ast.SelectCase]]:
        return ch[2], ch[4:]

    def select_case(self, ch: list) -> ast.SelectCase:
        keyset = _keyset(ch[0])
        return ast.SelectCase(keyset, str(ch[1]), loc=keyset.loc)

    def tuple_keyset(self, ch: list) -> ast.Keyset:
        return ast.Keyset(ch[1:], loc=ch[0].loc)

    def mask(self, ch: list) -> ast.Mask:
        return ast.Mask(ch[0], ch[2], loc=ch[0].loc)

    def range_expr(self, ch: list) -> ast.Range:
        return ast.Range(ch[0], ch[2], loc=ch[0].loc)

    def default_expr(self, ch: list) -> ast.Default:
        return ast.Default(loc=ch[0].loc)

    def dontcare(self, ch: list) -> ast.DontCare:
        return ast.DontCare(loc=ch[0].loc)

    def value_set_decl(self, ch: list) -> ast.ValueSetDecl:
        name = ch[4]
        _lexer().declare_object(str(name))
        return ast.ValueSetDecl(str(name), ch[2], ch[3], annotations=_annos(ch[0]), loc=name.loc)

    def control_decl(self, ch: list) -> ast.ControlDecl:
        annos, name, tparams, params = ch[0]
        local_decls = ch[3:-2]
        return ast.ControlDecl(
            str(name), params, ch[1] or [], local_decls, ch[-1], tparams,
            annotations=annos, loc=name.loc,
        )  # fmt: skip

    # ---------------------------------------------------- actions, tables

    def action_decl(self, ch: list) -> ast.ActionDecl:
        name = ch[2]
        return ast.ActionDecl(str(name), ch[4], ch[5], annotations=_annos(ch[0]), loc=name.loc)

    def table_decl(self, ch: list) -> ast.TableDecl:
        name = ch[2]
        table = ast.TableDecl(str(name), [], [], annotations=_annos(ch[0]), loc=name.loc)
        _table_properties_once(table, ch[4:])
        for kind, *rest in ch[4:]:
            if kind == "key":
                table.keys = rest[0]
            elif kind == "actions":
                table.actions = rest[0]
            elif kind == "entries":
                table.entries, table.entries_const = rest
            elif kind == "default":
                table.default_action, table.default_action_const = rest
            else:
                table.properties.append(rest[0])
        return table

    def key_prop(self, ch: list) -> tuple:
        return ("key", ch[2:])

    def actions_prop(self, ch: list) -> tuple:
        return ("actions", ch[2:])

    def entries_prop(self, ch: list) -> tuple:
        return ("entries", ch[4:], ch[1] is not None)

    def other_prop(self, ch: list) -> tuple:
        annos, const, name, value = ch
        if str(name) == "default_action":
            ref = _action_ref(value)
            ref.annotations = _annos(annos)
            return ("default", ref, const is not None)
        prop = ast.TableProperty(str(name), value, const is not None, _annos(annos), loc=name.loc)
        return ("prop", prop)

    def key_elem(self, ch: list) -> ast.KeyElement:
        expr, kind, annos = ch
        return ast.KeyElement(expr, str(kind), _annos(annos), loc=expr.loc)

    def action_elem(self, ch: list) -> ast.ActionRef:
        ref = ch[1]
        ref.annotations = _annos(ch[0])
        return ref

    def action_ref(self, ch: list) -> ast.ActionRef:
        name = ch[0]
        return ast.ActionRef(name, ch[2] if len(ch) > 1 else [], loc=name.loc)

    def entry(self, ch: list) -> ast.TableEntry:
        const, priority, keyset, action, annos = ch
        keyset = _keyset(keyset)
        return ast.TableEntry(
            keyset, action, priority, _annos(annos), const is not None, loc=keyset.loc
        )

    def entry_priority(self, ch: list) -> ast.Expr:
        value = ch[-1]
        return _int_literal(value) if isinstance(value, P4Token) else value

    # ------------------------------------------------ objects, variables

    def instantiation(self, ch: list) -> ast.Instantiation:
        return ch[0]

    def inst_core(self, ch: list) -> ast.Instantiation:
        annos, type_, _, args, name = ch[:5]
        for size in ch[5:]:  # `E() name[4];`: an array of instances
            type_ = ast.StackType(type_, size, loc=type_.loc)
        _lexer().declare_object(str(name))
        return ast.Instantiation(str(name), type_, args, annotations=_annos(annos), loc=name.loc)

    def obj_initializer(self, ch: list) -> None:
        raise P4UnsupportedError(
            "instantiations with an initializer block (abstract method "
            "implementations) are not supported",
            ch[0].loc,
        )

    def var_core(self, ch: list) -> ast.VarDecl:
        annos, type_, name = ch[0], ch[1], ch[2]
        for size in ch[3:-1]:
            type_ = ast.StackType(type_, size, loc=type_.loc)
        _lexer().declare_object(str(name))
        return ast.VarDecl(str(name), type_, ch[-1], annotations=_annos(annos), loc=name.loc)

    def const_core(self, ch: list) -> ast.ConstDecl:
        annos, _, type_, name, value = ch
        _lexer().declare_object(str(name))
        return ast.ConstDecl(str(name), type_, value, annotations=_annos(annos), loc=name.loc)

    # --------------------------------------------------------- statements

    def block(self, ch: list) -> ast.Block:
        return ast.Block(ch[2:], _annos(ch[0]), loc=ch[1].loc)

    def if_stmt(self, ch: list) -> ast.If:
        return ast.If(ch[2], ch[3], ch[-1], loc=ch[0].loc)  # [ELSE statement]: ch[-1]

    def empty_stmt(self, ch: list) -> ast.Empty:
        # The rule is just `;`, the token before the lookahead.
        prev = _lexer().prev
        return ast.Empty(loc=prev.loc if prev is not None else ast.NOLOC)

    def return_stmt(self, ch: list) -> ast.Return:
        return ast.Return(ch[1], loc=ch[0].loc)

    def break_stmt(self, ch: list) -> ast.Break:
        return ast.Break(loc=ch[0].loc)

    def continue_stmt(self, ch: list) -> ast.Continue:
        return ast.Continue(loc=ch[0].loc)

    def exit_stmt(self, ch: list) -> ast.Exit:
        return ast.Exit(loc=ch[0].loc)

    def switch_stmt(self, ch: list) -> ast.Switch:
        return ast.Switch(ch[2], ch[4:], loc=ch[0].loc)

    def switch_case(self, ch: list) -> ast.SwitchCase:
        label, body = ch
        return ast.SwitchCase(label, body, loc=label.loc)

    def for_stmt(self, ch: list) -> ast.For:
        _, kw, _, init, cond, update, body = ch
        return ast.For(init, cond, update, body, loc=kw.loc)

    def for_in_stmt(self, ch: list) -> ast.ForIn:
        _, kw, _, (type_, name), _, collection, body = ch
        return ast.ForIn(type_, str(name), collection, body, loc=kw.loc)

    def for_in_var(self, ch: list) -> tuple[ast.TypeRef | None, P4Token]:
        """``[annotations] T x`` or, without a type, ``x``."""
        return (ch[1], ch[2]) if len(ch) == 3 else (None, ch[0])

    def for_inits(self, ch: list) -> list[ast.Stmt]:
        return ch

    for_updates = for_inits

    def call_stmt(self, ch: list) -> ast.CallStmt:
        func = ch[0]
        type_args = next((c for c in ch[1:-2] if isinstance(c, list)), [])
        call = ast.Call(func, ch[-1], type_args, loc=func.loc)
        return ast.CallStmt(call, loc=func.loc)

    def assign(self, ch: list) -> ast.Assign:
        lhs = ch[0]
        op = str(ch[1])[:-1] if len(ch) == 3 else None
        return ast.Assign(lhs, ch[-1], op, loc=lhs.loc)

    # -------------------------------------------------------- expressions

    def mux(self, ch: list) -> ast.Mux:
        return ast.Mux(ch[0], ch[1], ch[2], loc=ch[0].loc)

    def binary(self, ch: list) -> ast.Binary:
        left = ch[0]
        return ast.Binary(str(ch[1]), left, ch[2], loc=left.loc)

    def unary(self, ch: list) -> ast.Unary:
        op = ch[0]
        return ast.Unary(str(op), ch[1], loc=op.loc)

    def cast(self, ch: list) -> ast.Cast:
        return ast.Cast(ch[1], ch[2], loc=ch[0].loc)

    def member(self, ch: list) -> ast.Member:
        expr = ch[0]
        return ast.Member(expr, str(ch[1]), loc=expr.loc)

    def type_member(self, ch: list) -> ast.Expr:
        left, name = ch
        if isinstance(left, P4Token):  # error.X
            return ast.Member(ast.Name(str(left), loc=left.loc), str(name), loc=left.loc)
        if isinstance(left, ast.TypeName):
            base = ast.Name(left.name, left.absolute, loc=left.loc)
            return ast.Member(base, str(name), loc=left.loc)
        return ast.TypeMember(left, str(name), loc=left.loc)

    def index(self, ch: list) -> ast.Index:
        return ast.Index(ch[0], ch[1], loc=ch[0].loc)

    def slice(self, ch: list) -> ast.Slice:
        return ast.Slice(ch[0], ch[1], ch[2], loc=ch[0].loc)

    def plus_slice(self, ch: list) -> ast.Expr:
        """``e[base +: width]`` is ``e[base + width - 1 : base]`` (P4-16
        8.6); both bounds must then be compile-time known, as a slice's are."""
        expr, base, width = ch[0], ch[1], ch[3]
        hi = ast.Binary("-", ast.Binary("+", base, width, loc=base.loc),
                        ast.IntLit(1, loc=base.loc), loc=base.loc)
        return ast.Slice(expr, hi, base, loc=expr.loc)

    def paren(self, ch: list) -> ast.Expr:
        return ch[1]

    def call(self, ch: list) -> ast.Call:
        func = ch[0]
        type_args = ch[1] if len(ch) == 4 else []
        return ast.Call(func, ch[-1], type_args, loc=func.loc)

    def ctor_call(self, ch: list) -> ast.Call:
        type_, args = ch[0], ch[2]
        if isinstance(type_, ast.SpecializedType):
            base = type_.base
            func = ast.Name(base.name, base.absolute, loc=base.loc)
            return ast.Call(func, args, type_.args, loc=type_.loc)
        func = ast.Name(type_.name, type_.absolute, loc=type_.loc)
        return ast.Call(func, args, loc=type_.loc)

    def int_lit(self, ch: list) -> ast.IntLit:
        return _int_literal(ch[0])

    def string_lit(self, ch: list) -> ast.StringLit:
        tok = ch[0]
        return ast.StringLit(tok.data, loc=tok.loc)

    def bool_lit(self, ch: list) -> ast.BoolLit:
        tok = ch[0]
        return ast.BoolLit(tok.type == "TRUE", loc=tok.loc)

    def this_expr(self, ch: list) -> ast.Expr:
        raise P4UnsupportedError("'this' is not supported", ch[0].loc)

    def dots(self, ch: list) -> ast.Expr:
        raise P4UnsupportedError("'...' is not supported", ch[0].loc)

    def invalid_expr(self, ch: list) -> ast.InvalidHeader:
        return ast.InvalidHeader(loc=ch[0].loc)

    def list_expr(self, ch: list) -> ast.ListExpr:
        return ast.ListExpr(ch[1], loc=ch[0].loc)

    def struct_expr(self, ch: list) -> ast.StructExpr:
        return ast.StructExpr(ch[1:], loc=ch[0].loc)

    def struct_dots(self, ch: list) -> ast.Expr:
        raise P4UnsupportedError("'...' in a structure initializer is not supported", ch[-1].loc)

    def expression_list(self, ch: list) -> list[ast.Expr]:
        return ch

    def kv_pair(self, ch: list) -> tuple[str, ast.Expr]:
        return str(ch[0]), ch[1]

    def args(self, ch: list) -> list[ast.Arg]:
        return [c if isinstance(c, ast.Arg) else ast.Arg(c, loc=c.loc) for c in ch]

    def named_arg(self, ch: list) -> ast.Arg:
        name, value = ch
        if isinstance(value, P4Token):  # name = _
            value = ast.DontCare(loc=value.loc)
        return ast.Arg(value, str(name), loc=name.loc)


def _keyset(value: ast.Keyset | ast.Expr) -> ast.Keyset:
    if isinstance(value, ast.Keyset):
        return value
    return ast.Keyset([value], loc=value.loc)


def _table_properties_once(table: ast.TableDecl, props: list[tuple]) -> None:
    """Each table property appears once, ``actions`` always and before the
    ``default_action`` that names one of them (p4c's rules)."""
    seen: set[str] = set()
    for kind, *rest in props:
        name = {"default": "default_action", "prop": ""}.get(kind, kind) or rest[0].name
        if name in seen:
            raise P4SemanticError(f"table {table.name}: property '{name}' is given twice",
                                  getattr(rest[0], "loc", None) or table.loc)
        if name == "default_action" and "actions" not in seen:
            raise P4SemanticError(f"table {table.name}: default_action comes before the "
                                  "actions list it names an action of", rest[0].loc)
        seen.add(name)
    if "actions" not in seen:
        raise P4SemanticError(f"table {table.name} has no 'actions' property", table.loc)


def _action_ref(value: ast.Expr) -> ast.ActionRef:
    """``default_action = a(args)`` arrives as an expression."""
    if isinstance(value, ast.Call):
        return ast.ActionRef(value.func, value.args, loc=value.loc)
    if isinstance(value, ast.Name | ast.Member):
        return ast.ActionRef(value, [], loc=value.loc)
    raise P4SyntaxError("default_action must name an action", value.loc)


# ---------------------------------------------------------------- driver

_GRAMMAR = Path(__file__).resolve().parent / "grammar.lark"
_parser_lock = threading.Lock()
_lark: Lark | None = None


def _get_lark() -> Lark:
    """Build the LALR tables once per process (lark caches them on disk
    keyed by the grammar's hash, so later processes load them)."""
    global _lark
    if _lark is None:
        with _parser_lock:
            if _lark is None:
                _lark = Lark(
                    _GRAMMAR.read_text(),
                    parser="lalr",
                    lexer=_LarkLexer,
                    transformer=_Builder(),
                    start=["program", "annotation_args"],
                    maybe_placeholders=True,
                    cache=True,
                )
    return _lark


def parse_text(text: str, filename: str) -> ast.Program:
    """Parse preprocessed P4 text. ``# N "file"`` markers in ``text`` set the
    file and line that nodes report; ``filename`` names the text before the
    first marker."""
    lexer = _Lexer(text, filename)
    program = _run(lexer, "program")
    program.loc = Loc(filename, 1, 1)
    _parse_annotation_args(lexer)
    return program


def parse_file(
    path: Path,
    include_dirs: Sequence[Path] = (),
    defines: Mapping[str, str] = MappingProxyType({}),
) -> ast.Program:
    """Preprocess ``path`` with cpp (as p4c does) and parse it."""
    text = preprocess(Path(path), include_dirs, defines)
    return parse_text(text, str(path))


def _run(lexer: _Lexer, start: str) -> Any:
    lark = _get_lark()
    saved = getattr(_current, "lexer", None)
    _current.lexer = lexer
    try:
        return lark.parse(lexer, start=start)
    except UnexpectedToken as err:
        raise _syntax_error(err, lexer) from None
    except UnexpectedInput as err:  # pragma: no cover - the custom lexer raises its own
        raise P4SyntaxError(f"syntax error: {err}", None) from None
    finally:
        _current.lexer = saved


def _parse_annotation_args(lexer: _Lexer) -> None:
    """Fill ``Annotation.args`` for bodies that are expression lists; other
    bodies (``@pragma`` text, key=value lists, types) keep ``args`` empty."""
    for ann, body, loc in lexer.annotations:
        m = _SIMPLE_STRING_BODY.fullmatch(body)
        if m is not None:
            offset = body.index('"')
            ann.args = [ast.StringLit(m.group(1), loc=Loc(loc.file, loc.line, loc.col + offset))]
            continue
        if not body.strip():
            continue
        m = _SIMPLE_INT_BODY.fullmatch(body)
        if m is not None:
            tok = _token("INTEGER", m.group(1), loc.file, loc.line, loc.col + m.start(1))
            with contextlib.suppress(P4SyntaxError):
                ann.args = [_int_literal(tok)]
            continue
        sub = _Lexer(
            body,
            loc.file,
            line=loc.line,
            col=loc.col,
            root=lexer.root,
            template_members=lexer.template_members,
        )
        try:
            ann.args = _run(sub, "annotation_args")
        except IntbedError:
            ann.args = []


# What to call a terminal in "expected ..." messages.
_DISPLAY = {v: repr(k) for k, v in _OPERATORS.items() if v != "ASSIGN_OP"}
_DISPLAY.update({v: repr(k) for k, v in _KEYWORDS.items()})
_DISPLAY.update({
    "IDENT": "an identifier", "TYPE_IDENT": "a type name", "INTEGER": "an integer",
    "STRING_LIT": "a string", "ANNOTATION": "an annotation", "ASSIGN_OP": "an assignment",
    "LT": "'<'", "_LT_ARGS": "'<'", "GT": "'>'", "_RANGLE": "'>'", "SHR": "'>>'",
    "SHL": "'<<'", "LE": "'<='", "GE": "'>='", "$END": "end of input",
})  # fmt: skip
_MAX_EXPECTED = 4
_EXPRESSION_START = frozenset({
    "INTEGER", "STRING_LIT", "TRUE", "FALSE", "THIS", "DOTS", "INVALID", "IDENT",
    "TYPE_IDENT", "APPLY", "KEY", "ACTIONS", "ENTRIES", "PRIORITY", "STATE", "TYPE",
    "_DOT", "LPAREN", "LBRACE", "ERROR", "NOT", "COMPL", "MINUS", "PLUS",
})  # fmt: skip


def _syntax_error(err: UnexpectedToken, lexer: _Lexer) -> P4SyntaxError:
    tok = err.token
    if tok.type == "$END":
        last = lexer.last
        loc = Loc(last.file, last.line, last.column) if last is not None else Loc(lexer.file, 1)
        what = "end of input"
    else:
        loc = Loc(tok.file, tok.line, tok.column)
        what = f"'{tok}'"
        if tok.type == "TYPE_IDENT":
            what += " (a type name)"
    message = f"syntax error at {what}"
    expected = _expected(err)
    if 0 < len(expected) <= _MAX_EXPECTED:
        message += ": expected " + " or ".join(expected)
    return P4SyntaxError(message, loc)


def _expected(err: UnexpectedToken) -> list[str]:
    """What could have come instead, for the message. The interactive
    parser tries each candidate (LALR's merged lookahead sets list tokens
    that would fail a step later); a set that can start an expression is
    summarised as "an expression"."""
    try:
        names = set(err.interactive_parser.accepts())
    except Exception:  # any failure: fall back to the parse table's lookaheads
        names = set(err.expected)
    names.discard("$END")
    shown = set()
    if {"INTEGER", "IDENT", "LPAREN"} <= names:
        names -= _EXPRESSION_START
        shown.add("an expression")
    shown.update(_DISPLAY.get(t, t) for t in names)
    return sorted(shown)
