/*
 * hash() with crc16, crc32, identity, csum16 and xor16 into header fields,
 * including the base + (H % max) reduction and max = 0. See hash.stf.
 */

#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<32> a;
    bit<16> b;
    bit<8>  c;
    bit<8>  d;
}

header result_t {
    bit<16> crc16;     /// crc16 {a, b, c}
    bit<32> crc32;     /// crc32 {a, b, c}
    bit<32> ident;     /// identity {a, b} (48 bits) reduced mod 2^32
    bit<16> csum;      /// csum16 {a, b, c, d}
    bit<16> xsum;      /// xor16 {a, b, c, d}
    bit<16> bucket;    /// 100 + crc16 {a, b, c} % 10
    bit<16> zero_max;  /// base 7, max 0
}

struct headers_t {
    data_t   data;
    result_t result;
}

struct meta_t {
}

parser HashParser(packet_in packet,
                  out headers_t hdr,
                  inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.data);
        transition accept;
    }
}

control HashVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control HashIngress(inout headers_t hdr,
                    inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        hdr.result.setValid();
        hash(hdr.result.crc16, HashAlgorithm.crc16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 32w0x10000);
        hash(hdr.result.crc32, HashAlgorithm.crc32, 32w0,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 64w0x100000000);
        hash(hdr.result.ident, HashAlgorithm.identity, 32w0,
             { hdr.data.a, hdr.data.b }, 64w0x100000000);
        hash(hdr.result.csum, HashAlgorithm.csum16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c, hdr.data.d }, 32w0x10000);
        hash(hdr.result.xsum, HashAlgorithm.xor16, 16w0,
             { hdr.data.a, hdr.data.b, hdr.data.c, hdr.data.d }, 32w0x10000);
        hash(hdr.result.bucket, HashAlgorithm.crc16, 16w100,
             { hdr.data.a, hdr.data.b, hdr.data.c }, 16w10);
        hash(hdr.result.zero_max, HashAlgorithm.crc16, 16w7,
             { hdr.data.a }, 16w0);
        standard_metadata.egress_spec = 1;
    }
}

control HashEgress(inout headers_t hdr,
                   inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control HashCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control HashDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.data);
        packet.emit(hdr.result);
    }
}

V1Switch(HashParser(), HashVerify(), HashIngress(), HashEgress(), HashCompute(),
         HashDeparser()) main;
