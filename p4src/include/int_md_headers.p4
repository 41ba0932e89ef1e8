/*
 * int_md_headers.p4: INT-MD over UDP (INT v2.0, and v1.0 for the v1.0
 * report mode) and the Telemetry Report v2.0 / v1.0 headers that
 * p4src/int_md.p4 writes. Bit layouts: docs/telemetry_report_format.md;
 * what this program puts in each field: docs/int_md_format.md.
 *
 * A packet inside the INT domain (INT over UDP, v2.0):
 *     Ethernet | IPv4 | UDP | shim | INT-MD header (12 bytes) |
 *     hop N metadata | ... | hop 1 (the source's) | UDP payload
 * A report to the collector:
 *     Ethernet | IPv4 | UDP (to the collector port) |
 *     TR v2.0 group header | individual report header | INT main contents |
 *     inner IPv4 | UDP | shim | INT-MD header | metadata stack
 * or, in the v1.0 report mode, the 16-byte TR v1.0 header in place of the
 * three v2.0 headers.
 */

#ifndef INT_MD_HEADERS_P4
#define INT_MD_HEADERS_P4

/// IPv4 DSCP that marks an INT packet (the INT specification's example
/// value, docs/telemetry_report_format.md). The parser needs a constant,
/// so it is set at compile time: p4c -DINT_MD_DSCP=...
#ifndef INT_MD_DSCP
#define INT_MD_DSCP 0x17
#endif

/// UDP destination port that marks an INT packet when the domain signals
/// INT by port (the specification's INT_TBD, which IANA never assigned).
#ifndef INT_MD_UDP_PORT
#define INT_MD_UDP_PORT 0x1E1E
#endif

/// Clone session of the reports; the control plane maps it to the
/// collector port.
#ifndef INT_MD_REPORT_SESSION
#define INT_MD_REPORT_SESSION 500
#endif

/// Metadata stack words the parser can hold: 252 is all an 8-bit shim
/// length can announce after the 3 words of fixed headers, so every INT
/// packet whose length fields are sane fits.
#ifndef INT_MD_MAX_WORDS
#define INT_MD_MAX_WORDS 252
#endif

/// A shim length shorter than the fixed INT headers.
error { IntBadLength }

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_TCP = 6;
const bit<8>  IPPROTO_UDP = 17;
const bit<6>  INT_DSCP = INT_MD_DSCP;
const bit<16> INT_UDP_PORT = INT_MD_UDP_PORT;

/// Shim and metadata header values.
const bit<4> INT_TYPE_MD = 1;       // v2.0 shim Type: INT-MD
const bit<8> INT_TYPE_HOP_BY_HOP = 1;  // v1.0 shim Type: hop-by-hop
const bit<2> NPT_DSCP = 0;          // the shim keeps the original DSCP
const bit<2> NPT_UDP_PORT = 1;      // the shim keeps the original UDP port
const bit<4> INT_VERSION_1 = 1;
const bit<4> INT_VERSION_2 = 2;
/// The E (max hop count exceeded) bit inside int_md_t.flags: v2.0 packs
/// D, E, M, reserved there, v1.0 Rep (2 bits), C, E.
const bit<4> V2_FLAG_D = 0x8;
const bit<4> V2_FLAG_E = 0x4;
const bit<4> V1_FLAG_E = 0x1;

/// Telemetry Report values.
const bit<4> TR_VERSION_1 = 1;
const bit<4> TR_VERSION_2 = 2;
const bit<4> TR2_REP_TYPE_INT = 1;
const bit<4> TR2_IN_TYPE_IPV4 = 4;
const bit<3> TR1_NPROT_IPV4 = 1;
const bit<8> TR2_REPORT_LENGTH_TO_END = 0xFF;

/// Sizes in bytes.
const bit<16> IPV4_BYTES = 20;
const bit<16> UDP_BYTES = 8;
const bit<16> ETHERNET_BYTES = 14;
const bit<16> TR2_BYTES = 20;       // group 8 + individual 4 + INT main contents 8
const bit<16> TR1_BYTES = 16;

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

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> len;
    bit<16> checksum;
}

/// The first four bytes of TCP: its ports, for ECMP and the watchlist.
header tcp_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

/// INT v2.0 shim for TCP/UDP (4 bytes). Length counts the metadata header
/// and the stack in words, not the shim. npt_field: NPT 0 - reserved byte,
/// original DSCP (6 bits), 2 reserved bits; NPT 1 - original UDP port.
header int_shim_t {
    bit<4>  int_type;
    bit<2>  npt;
    bit<2>  rsvd;
    bit<8>  len;
    bit<16> npt_field;
}

/// INT v1.0 shim for TCP/UDP (4 bytes). Length counts shim, metadata
/// header and stack in words.
header int_shim_v1_t {
    bit<8> int_type;
    bit<8> rsvd1;
    bit<8> len;
    bit<6> dscp;
    bit<2> rsvd2;
}

/// The first 8 bytes of the INT-MD metadata header, shared by v2.0 and
/// v1.0 (Hop ML, Remaining Hop Count and the bitmap sit at the same bits).
/// flags: v2.0 D, E, M, reserved; v1.0 Rep (2), C, E. flag8: v2.0
/// reserved, v1.0 M. domain_id: v2.0 Domain Specific ID, v1.0 reserved.
header int_md_t {
    bit<4>  ver;
    bit<4>  flags;
    bit<1>  flag8;
    bit<10> rsvd;
    bit<5>  hop_ml;
    bit<8>  remaining_hop_cnt;
    bit<16> instructions;
    bit<16> domain_id;
}

/// The third word of the v2.0 metadata header.
header int_md_ds_t {
    bit<16> ds_instructions;
    bit<16> ds_flags;
}

/// One word of the metadata stack that upstream hops pushed: carried
/// through as is, only summed (for the UDP checksum) and, at the sink,
/// removed.
header int_word_t {
    bit<32> w;
}

/// Per-hop metadata items, one header each, in instruction-bit order.
header int_node_id_t {
    bit<32> node_id;
}

header int_l1_ports_t {
    bit<16> ingress_port;
    bit<16> egress_port;
}

header int_hop_latency_t {
    bit<32> hop_latency;
}

header int_queue_t {
    bit<8>  queue_id;
    bit<24> occupancy;
}

/// Timestamps: 8 bytes in v2.0, 4 in v1.0.
header int_ts64_t {
    bit<64> ts;
}

header int_ts32_t {
    bit<32> ts;
}

header int_l2_ports_t {
    bit<32> ingress_port;
    bit<32> egress_port;
}

header int_tx_util_t {
    bit<32> util;
}

header int_buffer_t {
    bit<8>  buffer_id;
    bit<24> occupancy;
}

/// Telemetry Report v2.0 group header (8 bytes).
header tr2_group_t {
    bit<4>  ver;
    bit<6>  hw_id;
    bit<22> seq;
    bit<32> node_id;
}

/// Telemetry Report v2.0 individual report header (4 bytes).
header tr2_report_t {
    bit<4> rep_type;
    bit<4> in_type;
    bit<8> report_length;
    bit<8> md_length;
    bit<1> d;
    bit<1> q;
    bit<1> f;
    bit<1> i;
    bit<4> rsvd;
}

/// Telemetry Report v2.0 main contents for RepType INT, fixed part
/// (8 bytes); RepMdBits 0, so no metadata follows.
header tr2_int_t {
    bit<16> rep_md_bits;
    bit<16> domain_id;
    bit<16> ds_md_bits;
    bit<16> ds_md_status;
}

/// Telemetry Report v1.0 header without optional metadata (16 bytes).
header tr1_t {
    bit<4>  ver;
    bit<4>  len;
    bit<3>  nprot;
    bit<6>  rep_md_bits;
    bit<6>  rsvd;
    bit<1>  d;
    bit<1>  q;
    bit<1>  f;
    bit<6>  hw_id;
    bit<32> switch_id;
    bit<32> seq;
    bit<32> ingress_ts;
}

#endif  // INT_MD_HEADERS_P4
