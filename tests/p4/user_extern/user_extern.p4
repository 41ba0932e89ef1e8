// Externs the program declares itself, implemented by a Python plugin
// (plugin.py beside it) the way BMv2 loads extern libraries.
#include <core.p4>
#include <v1model.p4>

extern void mix(out bit<16> d, in bit<8> a, in bit<8> b);

extern Tally {
    Tally(bit<8> start);
    bit<8> next(in bit<8> add);
}

header h_t { bit<8> a; bit<8> b; bit<16> d; bit<8> t; }
struct H { h_t h; }
struct M { }

parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Tally(8w100) tally;
    apply {
        mix(hdr.h.d, hdr.h.a, hdr.h.b);
        hdr.h.t = tally.next(hdr.h.a);
        sm.egress_spec = 2;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
