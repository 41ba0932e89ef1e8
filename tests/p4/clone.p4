/*
 * clone(): ingress-to-egress and egress-to-egress copies, with and without
 * preserved user metadata, and a clone to an unconfigured session.
 * Every packet leaving egress carries a tag with its instance_type, the
 * two user metadata fields, its egress_port and packet_length.
 * See clone.stf.
 */

#include <core.p4>
#include <v1model.p4>

const bit<32> I2E_SESSION = 5;
const bit<32> E2E_SESSION = 6;
const bit<32> UNSET_SESSION = 9;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8>  instance_type;
    bit<8>  kept;
    bit<8>  lost;
    bit<8>  egress_port;
    bit<16> packet_length;
}

struct headers_t {
    tag_t      tag;
    ethernet_t ethernet;
}

struct meta_t {
    @field_list(1)
    bit<8> kept;
    bit<8> lost;
}

parser CloneParser(packet_in packet,
                   out headers_t hdr,
                   inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control CloneVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control CloneIngress(inout headers_t hdr,
                     inout meta_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.ethernet.etherType == 0x1111) {
            // The change below reaches the original only: an I2E copy is
            // the packet as it entered this ingress.
            clone(CloneType.I2E, I2E_SESSION);
            hdr.ethernet.srcAddr = 0xaaaaaaaaaaaa;
        } else if (hdr.ethernet.etherType == 0x2222) {
            meta.kept = 0x5a;
            meta.lost = 0xa5;
            clone_preserving_field_list(CloneType.I2E, I2E_SESSION, 1);
            // The copy gets the value at the end of ingress.
            meta.kept = 0x6b;
        } else if (hdr.ethernet.etherType == 0x4444) {
            clone(CloneType.I2E, UNSET_SESSION);
        }
    }
}

control CloneEgress(inout headers_t hdr,
                    inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 0 && hdr.ethernet.etherType == 0x3333) {
            // The E2E copy carries the headers as they are at the end of
            // this egress, this change included.
            hdr.ethernet.srcAddr = 0xbbbbbbbbbbbb;
            meta.lost = 0x3c;
            clone(CloneType.E2E, E2E_SESSION);
        }
        hdr.tag.setValid();
        hdr.tag.instance_type = (bit<8>)standard_metadata.instance_type;
        hdr.tag.kept = meta.kept;
        hdr.tag.lost = meta.lost;
        hdr.tag.egress_port = (bit<8>)standard_metadata.egress_port;
        hdr.tag.packet_length = (bit<16>)standard_metadata.packet_length;
    }
}

control CloneCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control CloneDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.tag);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(CloneParser(), CloneVerify(), CloneIngress(), CloneEgress(),
         CloneCompute(), CloneDeparser()) main;
