"""One program description: the compile pipeline records what the control
side needs (controller headers included), and ``dataplane.control`` reads
only that description, never the P4 source or the front end."""

from __future__ import annotations

import ast
from pathlib import Path

from dataplane.compiler.p4info import build_p4info
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch
from dataplane.schema import FieldInfo

REPO = Path(__file__).resolve().parents[2]
CONTROL = REPO / "dataplane" / "control"
PACKET_IO = REPO / "tests" / "p4rt" / "packet_io.p4"
FRONTEND = "dataplane.compiler.frontend"

HEADERS = """
#include <core.p4>
#include <v1model.p4>

typedef bit<9> port_t;
const bit<32> REASON_BITS = 7;

@controller_header("packet_in")
header cpu_in_t { port_t ingress_port; bit<REASON_BITS> reason; }

@controller_header("packet_out")
header cpu_out_t { port_t egress_port; bit<7> _pad; }

@controller_header("packet_in")
header unused_t { bit<8> x; }

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }

struct headers_t { cpu_out_t cpu_out; cpu_in_t[1] cpu_in; eth_t eth; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control V(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _imports(path: Path) -> list[str]:
    """Every module a file imports, at top level or inside functions."""
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against dataplane.control
                base = ["dataplane", "control"][: max(0, 2 - (node.level - 1))]
                names.append(".".join([*base, node.module or ""]).rstrip("."))
            elif node.module:
                names.append(node.module)
                # ``from dataplane.compiler import frontend`` names the package too.
                names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_control_never_imports_the_front_end() -> None:
    files = sorted(CONTROL.glob("*.py"))
    assert files
    offenders = {
        f"{path.name}: {name}"
        for path in files
        for name in _imports(path)
        if name == FRONTEND or name.startswith(FRONTEND + ".")
    }
    assert not offenders, sorted(offenders)


def test_schema_lists_reachable_controller_headers_with_resolved_widths(tmp_path: Path) -> None:
    source = tmp_path / "headers.p4"
    source.write_text(HEADERS)
    schema = compile_file(source).schema
    got = [(h.name, h.fields, h.annotations) for h in schema.controller_headers]
    assert got == [
        ("cpu_in_t", [FieldInfo("ingress_port", 9), FieldInfo("reason", 7)],
         ['@controller_header("packet_in")']),
        ("cpu_out_t", [FieldInfo("egress_port", 9), FieldInfo("_pad", 7)],
         ['@controller_header("packet_out")']),
    ]


def test_service_p4info_is_the_schema_p4info() -> None:
    """What the service serves is exactly ``build_p4info`` of the schema."""
    program = compile_file(PACKET_IO)
    service = RuntimeService(Switch(program), cpu_port=64)
    ours = build_p4info(program.schema)
    assert [h.preamble.name for h in ours.controller_packet_metadata] == [
        "packet_out", "packet_in"]
    assert service.p4info.SerializeToString(deterministic=True) == ours.SerializeToString(
        deterministic=True)


def test_source_is_not_read_again_after_compiling(tmp_path: Path) -> None:
    """The service works from the compiled program even when the file is gone."""
    source = tmp_path / "packet_io.p4"
    source.write_text(PACKET_IO.read_text())
    program = compile_file(source)
    source.unlink()
    service = RuntimeService(Switch(program), cpu_port=64)
    names = [h.preamble.name for h in service.p4info.controller_packet_metadata]
    assert names == ["packet_out", "packet_in"]
