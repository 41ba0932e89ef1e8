/* Test program for the simulator's traffic manager: forwards port 1 <-> 2
 * and writes the queue metadata BMv2 fills into a header after Ethernet. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header qmeta_t {
    bit<32> enq_qdepth;
    bit<32> deq_qdepth;
    bit<32> deq_timedelta;
    bit<32> enq_timestamp;
    bit<48> ingress_ts;
    bit<48> egress_ts;
    bit<32> rand;
}
struct headers_t { ethernet_t eth; qmeta_t q; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { 0x88b5: parse_q; default: accept; }
    }
    state parse_q { pkt.extract(h.q); transition accept; }
}
control V(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = sm.ingress_port == 1 ? 9w2 : 9w1;
        if (h.q.isValid()) {
            h.q.ingress_ts = sm.ingress_global_timestamp;
            random(h.q.rand, 32w0, 32w1000000);
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.q.isValid()) {
            h.q.enq_qdepth = (bit<32>) sm.enq_qdepth;
            h.q.deq_qdepth = (bit<32>) sm.deq_qdepth;
            h.q.deq_timedelta = sm.deq_timedelta;
            h.q.enq_timestamp = sm.enq_timestamp;
            h.q.egress_ts = sm.egress_global_timestamp;
        }
    }
}
control C(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.q); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
