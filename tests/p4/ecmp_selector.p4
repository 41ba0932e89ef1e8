// ECMP through an action_selector: the group member is picked by BMv2's
// crc16 over the IPv4 5-tuple; `indirect` shares a plain action_profile.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}
header ports_t { bit<16> src_port; bit<16> dst_port; }

struct headers { ethernet_t eth; ipv4_t ipv4; ports_t l4; }
struct metadata { }

parser ParserImpl(packet_in pkt, out headers h, inout metadata m,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 {
        pkt.extract(h.ipv4);
        transition select(h.ipv4.protocol) { 6: l4; 17: l4; default: accept; }
    }
    state l4 { pkt.extract(h.l4); transition accept; }
}

control NoVerify(inout headers h, inout metadata m) { apply { } }

control Ingress(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set_nhop(bit<48> dmac, bit<9> port) {
        h.eth.dst = dmac;
        sm.egress_spec = port;
    }
    action drop() { mark_to_drop(sm); }

    @max_group_size(16)
    action_selector(HashAlgorithm.crc16, 32w128, 32w16) ecmp_selector;

    table ecmp {
        key = {
            h.ipv4.dst_addr : lpm;
            h.ipv4.src_addr : selector;
            h.ipv4.dst_addr : selector;
            h.ipv4.protocol : selector;
            h.l4.src_port   : selector;
            h.l4.dst_port   : selector;
        }
        actions = { set_nhop; drop; }
        implementation = ecmp_selector;
        default_action = drop();
        size = 64;
    }

    table by_port {
        key = { sm.ingress_port : exact; }
        actions = { set_nhop; drop; }
        @name("port_profile") implementation = action_profile(32w16);
        default_action = drop();
    }

    apply {
        if (h.ipv4.isValid()) {
            ecmp.apply();
        } else {
            by_port.apply();
        }
    }
}

control NoEgress(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers h, inout metadata m) { apply { } }

control Deparser(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.ipv4); pkt.emit(h.l4); }
}

V1Switch(ParserImpl(), NoVerify(), Ingress(), NoEgress(), NoCompute(), Deparser()) main;
