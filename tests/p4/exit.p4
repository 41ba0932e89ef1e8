/*
 * exit: in the ingress apply block, inside an action, inside a control
 * applied from ingress, and in egress. The op field picks the case; each
 * later field shows whether the code after the exit point ran.
 * See exit.stf.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> op;
    bit<8> a;  /// ingress, before any exit
    bit<8> b;  /// inner control: 0x22 before its exit, 0x23 after
    bit<8> c;  /// action (0x33) or end of ingress (0x44)
    bit<8> e;  /// egress, before its exit
    bit<8> f;  /// egress, after its exit
}

struct headers_t {
    h_t h;
}

struct meta_t {
}

parser ExParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control ExVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

/// exit here ends the whole ingress, not just this control.
control Inner(inout h_t h) {
    apply {
        h.b = 0x22;
        if (h.op == 3) {
            exit;
        }
        h.b = 0x23;
    }
}

control ExIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    Inner() inner;

    action set_c_and_exit() {
        hdr.h.c = 0x33;
        exit;
    }

    apply {
        standard_metadata.egress_spec = 1;
        hdr.h.a = 0x11;
        if (hdr.h.op == 1) {
            exit;
        }
        if (hdr.h.op == 2) {
            set_c_and_exit();
        }
        inner.apply(hdr.h);
        hdr.h.c = 0x44;
    }
}

control ExEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.h.e = 0x55;
        if (hdr.h.op == 4) {
            exit;
        }
        hdr.h.f = 0x66;
    }
}

control ExCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control ExDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.h);
    }
}

V1Switch(ExParser(), ExVerify(), ExIngress(), ExEgress(), ExCompute(),
         ExDeparser()) main;
