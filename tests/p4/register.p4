/*
 * Registers keep state across packets: ingress reads, writes or adds to an
 * element chosen by the packet; egress numbers packets with a second
 * register. An indexed counter counts alongside (its values are not
 * visible to packets). See register.stf.
 */

#include <core.p4>
#include <v1model.p4>

const bit<8> OP_READ = 0;
const bit<8> OP_WRITE = 1;
const bit<8> OP_ADD = 2;

header op_t {
    bit<8>  op;
    bit<8>  idx;
    bit<32> value;
    bit<32> old;  /// element value before this packet (0xffffffff: idx >= 8)
    bit<32> seq;  /// how many packets egress saw before this one
}

struct headers_t {
    op_t op;
}

struct meta_t {
}

parser RegParser(packet_in packet,
                 out headers_t hdr,
                 inout meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.op);
        transition accept;
    }
}

control RegVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RegIngress(inout headers_t hdr,
                   inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    register<bit<32>>(8) store;
    counter(8, CounterType.packets_and_bytes) seen;

    apply {
        bit<32> old = 0xffffffff;
        seen.count((bit<32>)hdr.op.idx);
        // A read past the end leaves its result unspecified: skip it.
        if (hdr.op.idx < 8) {
            store.read(old, (bit<32>)hdr.op.idx);
        }
        hdr.op.old = old;
        if (hdr.op.op == OP_WRITE) {
            store.write((bit<32>)hdr.op.idx, hdr.op.value);
        } else if (hdr.op.op == OP_ADD) {
            store.write((bit<32>)hdr.op.idx, old + hdr.op.value);
        }
        standard_metadata.egress_spec = 1;
    }
}

control RegEgress(inout headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1) sequence;

    apply {
        bit<32> n;
        sequence.read(n, 0);
        hdr.op.seq = n;
        sequence.write(0, n + 1);
    }
}

control RegCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control RegDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.op);
    }
}

V1Switch(RegParser(), RegVerify(), RegIngress(), RegEgress(), RegCompute(),
         RegDeparser()) main;
