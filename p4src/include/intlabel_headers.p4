/*
 * intlabel_headers.p4: the packet formats of INT-label (see
 * docs/intlabel_format.md for the byte-level description).
 *
 * A labeled packet is
 *     Ethernet | IPv4 (protocol = INT_TYPE) | INT option | INT items | L4 ...
 * and a telemetry report sent to the collector is
 *     Ethernet | IPv4 | UDP | report header | INT items | IPv4 | L4 ports
 */

#ifndef INT_LABEL_HEADERS_P4
#define INT_LABEL_HEADERS_P4

/// IP protocol number that marks a labeled packet. 253 is one of the two
/// numbers RFC 3692 reserves for experiments. The parser needs it as a
/// constant (a parser cannot read a table), so it is set at compile time:
/// p4c -DINT_TYPE=254 ... changes it.
#ifndef INT_TYPE
#define INT_TYPE 253
#endif

/// Capacity of the INT item stack. The paper's FatTree paths have at most
/// 5 hops; 8 leaves room for longer paths. A port whose packet already
/// carries 8 items does not label it.
#define INT_MAX_ITEMS 8

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_TCP = 6;
const bit<8>  IPPROTO_UDP = 17;
const bit<8>  IPPROTO_INT = INT_TYPE;

/// INT item flags (byte 24 of an item): the bottom of the stack, i.e. the
/// item written when the INT option was created (first label of the packet).
/// The parser stops at it, as MPLS stops at its bottom-of-stack bit: the
/// item count cannot be derived from INT_num without MAX_hop, which is a
/// run-time parameter the parser cannot see.
const bit<8>  ITEM_FLAG_BOTTOM = 0x80;

const bit<16> INT_OPTION_BYTES = 2;
const bit<16> INT_ITEM_BYTES = 32;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

/// RFC 791 header without options (IHL 5).
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

/// INT OPTION (paper Fig. 4): the original IPv4 protocol and the number of
/// labels, plus MAX_hop for a specific flow (paper section 3.3).
header int_option_t {
    bit<8> nh;
    bit<8> int_num;
}

/// One label: 32 bytes, written by the egress port that labels the packet.
header int_item_t {
    bit<32> switch_id;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<48> ingress_ts;    // ingress_global_timestamp, microseconds
    bit<48> label_ts;      // egress_global_timestamp: the label time (LT)
    bit<32> hop_latency;   // deq_timedelta, microseconds
    bit<8>  flags;         // ITEM_FLAG_BOTTOM on the first item
    bit<24> enq_qdepth;    // packets
    bit<8>  reserved;
    bit<24> deq_qdepth;    // packets
}

/// The first four bytes of TCP and UDP: the ports, for ECMP hashing and
/// flow identification. The rest of the L4 header stays in the payload.
header l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

/// Telemetry report header (8 bytes), first in the report's UDP payload.
header report_t {
    bit<4>  version;
    bit<4>  flags;         // REPORT_FLAG_SPECIFIC
    bit<8>  int_num;       // INT_num as the packet carried it
    bit<8>  item_count;    // INT items that follow
    bit<8>  max_hop;       // the sink's MAX_hop
    bit<32> switch_id;     // the sink (last-hop) switch
}

/// An INT item carried as one 256-bit word, for the report: the sink keeps
/// the items in metadata across the egress-to-egress clone.
header int_item_word_t {
    bit<256> data;
}

const bit<4>  REPORT_VERSION = 1;
const bit<4>  REPORT_FLAG_SPECIFIC = 1;
const bit<16> REPORT_HDR_BYTES = 8;

#endif  // INT_LABEL_HEADERS_P4
