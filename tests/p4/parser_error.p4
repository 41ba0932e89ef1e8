/*
 * Parser errors reach ingress in standard_metadata.parser_error and do not
 * drop the packet: PacketTooShort from extract and lookahead, and a
 * program-declared error from verify. See parser_error.stf.
 */

#include <core.p4>
#include <v1model.p4>

error {
    BadVersion
}

header first_t {
    bit<8> version;  /// 1: first only, 2: then second, 3: peek 16 bits
    bit<8> len;
}

header second_t {
    bit<32> x;
}

header result_t {
    bit<8>  code;  /// 0 NoError, 1 PacketTooShort, 0x10 BadVersion, 0xff other
    bit<16> peek;
}

struct headers_t {
    result_t result;
    first_t  first;
    second_t second;
}

struct meta_t {
    bit<16> peek;
}

parser PeParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.first);
        verify(hdr.first.version >= 1 && hdr.first.version <= 3, error.BadVersion);
        transition select(hdr.first.version) {
            2: parse_second;
            3: parse_peek;
            default: accept;
        }
    }

    state parse_second {
        packet.extract(hdr.second);
        transition accept;
    }

    state parse_peek {
        meta.peek = packet.lookahead<bit<16>>();
        transition accept;
    }
}

control PeVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control PeIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.result.setValid();
        hdr.result.peek = meta.peek;
        if (standard_metadata.parser_error == error.NoError) {
            hdr.result.code = 0;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            hdr.result.code = 1;
        } else if (standard_metadata.parser_error == error.BadVersion) {
            hdr.result.code = 0x10;
        } else {
            hdr.result.code = 0xff;
        }
        standard_metadata.egress_spec = 1;
    }
}

control PeEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control PeCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control PeDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.result);
        packet.emit(hdr.first);
        packet.emit(hdr.second);
    }
}

V1Switch(PeParser(), PeVerify(), PeIngress(), PeEgress(), PeCompute(),
         PeDeparser()) main;
