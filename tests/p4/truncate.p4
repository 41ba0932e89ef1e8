/*
 * truncate(): the packet that leaves is cut to the given number of bytes,
 * counted on the deparsed packet (egress changes included). The header
 * field x selects the case. See truncate.stf.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<16> y;
}

struct headers_t {
    h_t h;
}

struct meta_t {
}

parser TrParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control TrVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TrIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.h.x == 1) {
            truncate(6);
        } else if (hdr.h.x == 2) {
            truncate(9);
            truncate(5);
        } else if (hdr.h.x == 3) {
            truncate(5);
            truncate(9);
        } else if (hdr.h.x == 4) {
            truncate(100);
        }
    }
}

control TrEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.h.y = 0xabcd;
        if (hdr.h.x == 5) {
            truncate(3);
        }
    }
}

control TrCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control TrDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.h);
    }
}

V1Switch(TrParser(), TrVerify(), TrIngress(), TrEgress(), TrCompute(),
         TrDeparser()) main;
