/*
 * shell_counter: the smallest program with a table and a counter, for
 * driving a switch with p4runtime-shell. Every frame is counted by its
 * ingress port in `port_pkts`; `fwd` sends frames by destination MAC.
 */

#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    ethernet_t ethernet;
}

struct meta_t { }

parser ShellParser(packet_in packet,
                   out headers_t hdr,
                   inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control ShellVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control ShellIngress(inout headers_t hdr,
                     inout meta_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets_and_bytes) port_pkts;

    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action drop() {
        mark_to_drop(standard_metadata);
    }

    table fwd {
        key = {
            hdr.ethernet.dstAddr: exact;
        }
        actions = {
            to_port;
            drop;
        }
        default_action = drop();
        size = 16;
    }

    apply {
        port_pkts.count((bit<32>) standard_metadata.ingress_port);
        fwd.apply();
    }
}

control ShellEgress(inout headers_t hdr,
                    inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control ShellCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control ShellDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(ShellParser(), ShellVerify(), ShellIngress(), ShellEgress(), ShellCompute(),
         ShellDeparser()) main;
