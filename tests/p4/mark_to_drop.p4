/*
 * mark_to_drop(standard_metadata) in ingress and egress, and how later
 * writes to egress_spec / mcast_grp override it. The op field picks the
 * case. See mark_to_drop.stf.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> op;
    bit<8> port;  /// egress_port, written by egress
}

struct headers_t {
    h_t h;
}

struct meta_t {
}

parser DrParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control DrVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DrIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.h.op == 1) {
            mark_to_drop(standard_metadata);
        } else if (hdr.h.op == 2) {
            mark_to_drop(standard_metadata);
            standard_metadata.egress_spec = 2;
        } else if (hdr.h.op == 3) {
            standard_metadata.mcast_grp = 1;
            mark_to_drop(standard_metadata);
        } else if (hdr.h.op == 4) {
            mark_to_drop(standard_metadata);
            standard_metadata.mcast_grp = 1;
        } else if (hdr.h.op == 5) {
            standard_metadata.egress_spec = 511;
        } else if (hdr.h.op == 7) {
            standard_metadata.egress_spec = 3;
        }
    }
}

control DrEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.h.port = (bit<8>)standard_metadata.egress_port;
        if (hdr.h.op == 6) {
            mark_to_drop(standard_metadata);
        }
    }
}

control DrCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DrDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.h);
    }
}

V1Switch(DrParser(), DrVerify(), DrIngress(), DrEgress(), DrCompute(),
         DrDeparser()) main;
