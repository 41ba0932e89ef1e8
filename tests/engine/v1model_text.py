"""A whole v1model program around the parts an engine test is about: the
types, the parser, the ingress control (``P``, ``I``) and the deparser
(``D``); verify, egress and checksum update are empty."""

from __future__ import annotations

_EMPTY = """control V(inout H hdr, inout M m) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
"""


def v1model(types: str, parser: str, ingress: str, deparser: str) -> str:
    return ("#include <core.p4>\n#include <v1model.p4>\n" + types + parser + ingress + _EMPTY
            + deparser + "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")
