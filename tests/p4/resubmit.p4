/*
 * resubmit_preserving_field_list: the first ingress pass changes a header
 * and two metadata fields, then resubmits; the second pass (instance_type
 * RESUBMIT) records what it sees in a tag header. See resubmit.stf.
 */

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8>  instance_type;         /// as seen by ingress
    bit<8>  egress_instance_type;  /// as seen by egress
    bit<8>  kept;
    bit<8>  lost;
    bit<16> packet_length;
}

struct headers_t {
    tag_t      tag;
    ethernet_t ethernet;
}

struct meta_t {
    @field_list(0)
    bit<8> kept;
    bit<8> lost;
}

parser RsParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control RsVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RsIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (standard_metadata.instance_type == 0 && hdr.ethernet.etherType == 0x1234) {
            meta.kept = 0x11;
            meta.lost = 0x22;
            // Lost with the resubmit: the packet starts over as received.
            hdr.ethernet.srcAddr = 0xffffffffffff;
            resubmit_preserving_field_list(0);
            // Preserved values are taken at the end of ingress.
            meta.kept = 0x33;
        }
        hdr.tag.setValid();
        hdr.tag.instance_type = (bit<8>)standard_metadata.instance_type;
        hdr.tag.egress_instance_type = 0xee;
        hdr.tag.kept = meta.kept;
        hdr.tag.lost = meta.lost;
        hdr.tag.packet_length = (bit<16>)standard_metadata.packet_length;
    }
}

control RsEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.tag.egress_instance_type = (bit<8>)standard_metadata.instance_type;
    }
}

control RsCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RsDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.tag);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(RsParser(), RsVerify(), RsIngress(), RsEgress(), RsCompute(),
         RsDeparser()) main;
