/*
 * calibrate: the router `intbed calibrate` times a switch binary with.
 *
 * The work of BMv2's own sample router (behavioral-model's
 * mininet/simple_router.p4, the program BMv2 is usually timed with):
 * Ethernet -> IPv4 parsing, a longest-prefix match on the destination that
 * picks the next hop and the port, an exact match from the next hop to its
 * MAC, the source MAC rewritten per egress port, TTL decrement, and the
 * IPv4 checksum recomputed. Its entries are constant, for the calibration
 * network alone (10.0.1.0/24 behind port 1, 10.0.2.0/24 behind port 2), so
 * the switch forwards without a control plane.
 */

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct metadata_t {
    bit<32> nhop_ipv4;
}

parser CalParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control CalVerify(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control CalIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action set_nhop(bit<32> nhop_ipv4, bit<9> port) {
        meta.nhop_ipv4 = nhop_ipv4;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action set_dmac(bit<48> dmac) {
        hdr.ethernet.dstAddr = dmac;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_nhop; drop; }
        default_action = drop();
        const entries = {
            0x0a000100 &&& 0xffffff00: set_nhop(0x0a000101, 1);
            0x0a000200 &&& 0xffffff00: set_nhop(0x0a000202, 2);
        }
    }
    table forward {
        key = { meta.nhop_ipv4: exact; }
        actions = { set_dmac; drop; }
        default_action = drop();
        const entries = {
            0x0a000101: set_dmac(0x000000000101);
            0x0a000202: set_dmac(0x000000000202);
        }
    }
    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 0) {
            ipv4_lpm.apply();
            forward.apply();
        } else {
            drop();
        }
    }
}

control CalEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action rewrite_mac(bit<48> smac) {
        hdr.ethernet.srcAddr = smac;
    }
    table send_frame {
        key = { standard_metadata.egress_port: exact; }
        actions = { rewrite_mac; NoAction; }
        default_action = NoAction();
        const entries = {
            1: rewrite_mac(0x0000000001fe);
            2: rewrite_mac(0x0000000002fe);
        }
    }
    apply {
        send_frame.apply();
    }
}

control CalChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control CalDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(CalParser(), CalVerify(), CalIngress(), CalEgress(), CalChecksum(),
         CalDeparser()) main;
