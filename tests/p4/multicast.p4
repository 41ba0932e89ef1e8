/*
 * Multicast replication: mcast_grp chosen in ingress from the low 16 bits of
 * the destination MAC; egress tags each copy with egress_rid, instance_type,
 * egress_port and mcast_grp. mark_to_drop after choosing a group cancels the
 * replication. See multicast.stf.
 */

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<16> egress_rid;
    bit<8>  instance_type;
    bit<8>  egress_port;
    bit<16> mcast_grp;
}

struct headers_t {
    tag_t      tag;
    ethernet_t ethernet;
}

struct meta_t {
}

parser McParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control McVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control McIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        // Used only when no group is chosen: replication wins over it.
        standard_metadata.egress_spec = 5;
        standard_metadata.mcast_grp = hdr.ethernet.dstAddr[15:0];
        if (hdr.ethernet.etherType == 0x0bad) {
            mark_to_drop(standard_metadata);
        }
    }
}

control McEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        hdr.tag.setValid();
        hdr.tag.egress_rid = standard_metadata.egress_rid;
        hdr.tag.instance_type = (bit<8>)standard_metadata.instance_type;
        hdr.tag.egress_port = (bit<8>)standard_metadata.egress_port;
        hdr.tag.mcast_grp = standard_metadata.mcast_grp;
    }
}

control McCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control McDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.tag);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(McParser(), McVerify(), McIngress(), McEgress(), McCompute(),
         McDeparser()) main;
