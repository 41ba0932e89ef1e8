/*
 * packet_io: a small learning switch that exercises every P4Runtime entity
 * the runtime service serves.
 *
 * - Packet-out: frames from the controller arrive on CPU_PORT behind a
 *   @controller_header("packet_out") header whose egress_port picks the
 *   output port; the header is removed before the frame leaves.
 * - Packet-in: a miss in `fwd` (or the send_to_cpu action) sends the frame
 *   to CPU_PORT behind a @controller_header("packet_in") header carrying
 *   the ingress port and a reason code.
 * - Digest: every frame from a front-panel port sends (srcAddr, port) to the
 *   controller for MAC learning.
 * - `acl` (ternary + range, priorities) can drop or redirect; `fwd` has a
 *   direct counter and a direct meter; `port_pkts` counts per ingress port;
 *   `last_len` remembers the last frame length per port; `port_meter`
 *   colours frames per port into meta.color.
 */

#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<3> flags;
    bit<4> _pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> reason;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

struct learn_t {
    bit<48> srcAddr;
    bit<9>  port;
}

struct meta_t {
    bit<2>  color;
    learn_t learn;
}

parser IoParser(packet_in packet,
                out headers_t hdr,
                inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control IoVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IoIngress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(128, CounterType.packets_and_bytes) port_pkts;
    register<bit<32>>(128) last_len;
    meter(128, MeterType.packets) port_meter;
    direct_counter(CounterType.packets_and_bytes) fwd_counter;
    direct_meter<bit<2>>(MeterType.bytes) fwd_meter;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action send_to_cpu(bit<7> reason) {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in.reason = reason;
    }

    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
        fwd_meter.read(meta.color);
    }

    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }

    action mirror(bit<32> session, bit<9> port) {
        standard_metadata.egress_spec = port;
        clone(CloneType.I2E, session);
    }

    table fwd {
        key = {
            hdr.ethernet.dstAddr: exact;
        }
        actions = {
            to_port;
            flood;
            mirror;
            send_to_cpu;
            drop;
        }
        default_action = send_to_cpu(1);
        counters = fwd_counter;
        meters = fwd_meter;
        size = 64;
    }

    action acl_drop() {
        mark_to_drop(standard_metadata);
    }

    action acl_redirect(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table acl {
        key = {
            hdr.ethernet.srcAddr: ternary;
            hdr.ethernet.etherType: range;
            standard_metadata.ingress_port: optional;
        }
        actions = {
            acl_drop;
            acl_redirect;
            NoAction;
        }
        const default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            return;
        }
        port_pkts.count((bit<32>) standard_metadata.ingress_port);
        last_len.write((bit<32>) standard_metadata.ingress_port,
                       standard_metadata.packet_length);
        port_meter.execute_meter((bit<32>) standard_metadata.ingress_port, meta.color);
        meta.learn.srcAddr = hdr.ethernet.srcAddr;
        meta.learn.port = standard_metadata.ingress_port;
        digest<learn_t>(1, meta.learn);
        if (!acl.apply().hit) {
            fwd.apply();
        }
    }
}

control IoEgress(inout headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control IoCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control IoDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(IoParser(), IoVerify(), IoIngress(), IoEgress(), IoCompute(), IoDeparser()) main;
