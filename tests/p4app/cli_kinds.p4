/* Every kind of object a simple_switch_CLI command file configures: exact,
 * lpm and ternary+range tables (one with a direct counter, one with a
 * direct meter), a counter, a meter and a register. */
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

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct metadata {
    bit<2> color;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(64, CounterType.packets_and_bytes) port_pkts;
    meter(64, MeterType.packets) port_meter;
    register<bit<32>>(64) last_len;
    direct_counter(CounterType.packets) acl_hits;
    direct_meter<bit<2>>(MeterType.bytes) dmac_meter;

    action drop() { mark_to_drop(sm); }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action set_nhop(bit<48> dmac, bit<9> port) {
        hdr.ethernet.dstAddr = dmac;
        sm.egress_spec = port;
    }
    action metered_forward(bit<9> port) {
        sm.egress_spec = port;
        dmac_meter.read(meta.color);
    }
    action count_acl(bit<16> tag) { acl_hits.count(); }
    action deny() { acl_hits.count(); mark_to_drop(sm); }

    table dmac {
        key = { hdr.ethernet.dstAddr: exact; sm.ingress_port: exact; }
        actions = { metered_forward; drop; NoAction; }
        meters = dmac_meter;
        default_action = NoAction;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_nhop; drop; }
        default_action = drop;
    }
    table acl {
        key = { hdr.ipv4.srcAddr: ternary; hdr.ipv4.protocol: range; }
        actions = { count_acl; deny; }
        counters = acl_hits;
        default_action = count_acl(0);
    }
    apply {
        port_pkts.count((bit<32>)sm.ingress_port);
        port_meter.execute_meter((bit<32>)sm.ingress_port, meta.color);
        last_len.write((bit<32>)sm.ingress_port, sm.packet_length);
        dmac.apply();
        if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
            acl.apply();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
