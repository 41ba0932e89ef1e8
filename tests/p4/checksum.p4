/*
 * verify_checksum and verify_checksum_with_payload setting
 * standard_metadata.checksum_error, chosen per packet by a mode field.
 * See checksum.stf.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  mode;  /// 0: no check, 1: header only, 2: header + payload
    bit<8>  pad;
    bit<16> a;
    bit<16> b;
    bit<16> csum;
}

header result_t {
    bit<8> checksum_error;
}

struct headers_t {
    result_t result;
    h_t      h;
}

struct meta_t {
}

parser CkParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control CkVerify(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.h.mode == 1,
                        { hdr.h.mode, hdr.h.pad, hdr.h.a, hdr.h.b },
                        hdr.h.csum, HashAlgorithm.csum16);
        verify_checksum_with_payload(hdr.h.mode == 2,
                                     { hdr.h.mode, hdr.h.pad, hdr.h.a, hdr.h.b },
                                     hdr.h.csum, HashAlgorithm.csum16);
    }
}

control CkIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.result.setValid();
        hdr.result.checksum_error = (bit<8>)standard_metadata.checksum_error;
        standard_metadata.egress_spec = 1;
    }
}

control CkEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control CkCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control CkDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.result);
        packet.emit(hdr.h);
    }
}

V1Switch(CkParser(), CkVerify(), CkIngress(), CkEgress(), CkCompute(),
         CkDeparser()) main;
