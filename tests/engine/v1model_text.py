"""A whole v1model program around the parts an engine test is about: the
types, the parser, the ingress control (``P``, ``I``) and the deparser
(``D``), and the checksum update (``C``) when given; verify and egress are
empty, and so is the checksum update otherwise."""

from __future__ import annotations

_EMPTY_VE = """control V(inout H hdr, inout M m) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
"""
_EMPTY_C = "control C(inout H hdr, inout M m) { apply { } }\n"


def v1model(types: str, parser: str, ingress: str, deparser: str, compute: str = _EMPTY_C
            ) -> str:
    return ("#include <core.p4>\n#include <v1model.p4>\n" + types + parser + ingress
            + _EMPTY_VE + compute + deparser + "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")
