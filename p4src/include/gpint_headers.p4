/*
 * gpint_headers.p4: the packet formats of GPINT with SQR (see
 * docs/gpint_format.md for the byte-level description).
 *
 * A probe (and a recovery notice) is
 *     Ethernet | IPv4 (protocol GPINT_PROTO) | Req META | SR stack | INT stack
 * and a feedback is the probe cut after Req META:
 *     Ethernet | IPv4 (protocol GPINT_PROTO) | Req META
 * The IPv4 DSCP says which of the three a packet is.
 */

#ifndef GPINT_HEADERS_P4
#define GPINT_HEADERS_P4

/// IP protocol number of GPINT packets. 254 is one of the two numbers
/// RFC 3692 reserves for experiments (INT-label uses 253). The parser needs
/// it as a constant, so it is set at compile time: p4c -DGPINT_PROTO=...
#ifndef GPINT_PROTO
#define GPINT_PROTO 254
#endif

/// Stack limits (docs/gpint_format.md): 200 SR entries and DLV entries,
/// 128 measurement values in all.
#define GPINT_MAX_SR 200
#define GPINT_MAX_DLV 200
#define GPINT_MAX_MEA 128

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_TCP = 6;
const bit<8>  IPPROTO_UDP = 17;
const bit<8>  IPPROTO_GPINT = GPINT_PROTO;

/// IPv4 DSCP (upper six bits of the TOS byte) of the three packet kinds.
const bit<6> DSCP_PROBE = 0x17;     // measurement probe
const bit<6> DSCP_FEEDBACK = 0x19;  // feedback to the previous hop
const bit<6> DSCP_NOTICE = 0x21;    // recovery notice to the monitor

/// Req META request_type.
const bit<1> REQ_RULE_HITS = 0;
const bit<1> REQ_PORT_PACKETS = 1;

/// Sizes in bytes, for IPv4 totalLen bookkeeping.
const bit<16> IPV4_BYTES = 20;
const bit<16> REQ_BYTES = 2;
const bit<16> SR_ENTRY_BYTES = 3;
const bit<16> DLV_ENTRY_BYTES = 4;
const bit<16> MEA_VALUE_BYTES = 4;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

/// RFC 791 header without options (IHL 5); the TOS byte split into DSCP
/// and ECN.
header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
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

/// The first four bytes of TCP and UDP: the ports ECMP hashes on.
header l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

/// Req META (2 bytes).
header gpint_req_t {
    bit<15> request_id;
    bit<1>  request_type;
}

/// A 16-bit count in front of a list: sr_count, dlv_count, mea_total.
header gpint_count_t {
    bit<16> count;
}

/// One SR entry (3 bytes). The paper's 16-bit MEA range is start << 8 |
/// count, i.e. the start byte then the count byte on the wire.
header gpint_sr_t {
    bit<8> next_port;
    bit<8> mea_start;
    bit<8> mea_count;
}

/// One DLV entry (4 bytes).
header gpint_dlv_t {
    bit<8>  switch_id;
    bit<8>  qdepth;
    bit<16> mea_count;
}

/// One measurement value (4 bytes).
header gpint_mea_t {
    bit<32> value;
}

#endif  // GPINT_HEADERS_P4
