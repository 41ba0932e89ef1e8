/*
 * recirculate_preserving_field_list: the first egress pass inserts an info
 * header and recirculates; the second pass records in it what ingress and
 * egress see. See recirculate.stf.
 */

#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_INFO = 0x88b5;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header info_t {
    bit<8>  instance_type;         /// as seen by ingress
    bit<8>  egress_instance_type;  /// as seen by egress
    bit<8>  kept;
    bit<8>  lost;
    bit<16> packet_length;
}

struct headers_t {
    ethernet_t ethernet;
    info_t     info;
}

struct meta_t {
    @field_list(0)
    bit<8> kept;
    bit<8> lost;
}

parser RcParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_INFO: parse_info;
            default: accept;
        }
    }

    state parse_info {
        packet.extract(hdr.info);
        transition accept;
    }
}

control RcVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RcIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 4 && hdr.info.isValid()) {
            hdr.info.instance_type = (bit<8>)standard_metadata.instance_type;
            hdr.info.kept = meta.kept;
            hdr.info.lost = meta.lost;
            hdr.info.packet_length = (bit<16>)standard_metadata.packet_length;
            standard_metadata.egress_spec = 2;
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control RcEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ethernet.etherType == 0x1234) {
            hdr.ethernet.etherType = ETHERTYPE_INFO;
            hdr.info.setValid();
            hdr.info.instance_type = 0xee;
            hdr.info.egress_instance_type = 0xee;
            hdr.info.kept = 0xee;
            hdr.info.lost = 0xee;
            hdr.info.packet_length = 0xeeee;
            meta.kept = 0x44;
            meta.lost = 0x55;
            recirculate_preserving_field_list(0);
        } else if (hdr.info.isValid()) {
            hdr.info.egress_instance_type = (bit<8>)standard_metadata.instance_type;
        }
    }
}

control RcCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RcDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.info);
    }
}

V1Switch(RcParser(), RcVerify(), RcIngress(), RcEgress(), RcCompute(),
         RcDeparser()) main;
