/*
 * int_md: In-band Network Telemetry in INT-MD mode over UDP (INT v2.0, with
 * INT v1.0 as an option) with Telemetry Report v2.0 (or v1.0) output, for
 * v1model (BMv2 simple_switch). Formats and the control-plane contract in
 * detail: docs/int_md_format.md; bit layouts: docs/telemetry_report_format.md.
 *
 * Forwarding is l3_forward.p4's (same tables and actions, so
 * controller/routing.py installs routes unchanged). On top of it, per
 * packet:
 * - Source (ingress, the packet came in by a port in int_source_port): a
 *   UDP packet that matches int_watchlist gets the 4-byte shim and the
 *   INT-MD metadata header after its UDP header; INT is signalled by DSCP
 *   INT_MD_DSCP (NPT 0, original DSCP in the shim) or by UDP destination
 *   port INT_MD_UDP_PORT (NPT 1, original port in the shim), as
 *   int_source_config says. Any other packet from a host that carries DSCP
 *   INT_MD_DSCP leaves with DSCP 0: that value belongs to INT here.
 * - Every switch (egress): an INT packet gets this switch's metadata pushed
 *   on top of the stack in instruction-bit order, its Remaining Hop Count
 *   decremented, shim length, IPv4 total length and UDP length grown; with
 *   Remaining Hop Count 0 it only sets the E bit.
 * - Sink (egress, the packet leaves by a port in int_sink_port): the INT
 *   headers and stack are removed, the DSCP or UDP port put back, and an
 *   egress-to-egress clone (session INT_MD_REPORT_SESSION) becomes the
 *   telemetry report: the packet as it was, plus this switch's own hop,
 *   behind Ethernet/IPv4/UDP and the Telemetry Report headers, cut after
 *   the metadata stack.
 *
 * UDP checksum: a zero checksum stays zero (RFC 768: none). Otherwise every
 * change is folded into it incrementally (RFC 1624), so the checksum stays
 * right inside the INT domain and the sink gives the host back the exact
 * original value: the sink subtracts the sum of the stack, which the parser
 * adds up word by word.
 *
 * Control-plane contract (P4Info names):
 *
 * | table | key | actions (default) |
 * | --- | --- | --- |
 * | MyIngress.ipv4_lpm (1024) | hdr.ipv4.dstAddr lpm | MyIngress.ipv4_forward(bit<48> dstAddr, bit<9> port), MyIngress.set_ecmp(bit<16> group, bit<16> count), MyIngress.drop() (default) |
 * | MyIngress.ecmp_nhop (4096) | meta.ecmp_group, meta.ecmp_select exact | MyIngress.ipv4_forward, MyIngress.drop() (default) |
 * | MyIngress.int_source_port (512) | standard_metadata.ingress_port exact | MyIngress.set_source_port(), NoAction (default) |
 * | MyIngress.int_watchlist (1024) | hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol ternary; meta.l4_sport, meta.l4_dport range | MyIngress.int_watch(bit<16> instructions, bit<8> max_hop_cnt), NoAction (default) |
 * | MyIngress.int_source_config | none | MyIngress.set_source_config(bit<1> by_port, bit<4> int_version, bit<16> domain_id) (default set_source_config(0, 2, 0)) |
 * | MyEgress.int_node_config | none | MyEgress.set_node_id(bit<32> node_id) (default set_node_id(0)) |
 * | MyEgress.int_sink_port (512) | standard_metadata.egress_port exact | MyEgress.set_sink_port(), NoAction (default) |
 * | MyEgress.int_report_config | none | MyEgress.set_report(bit<48> src_mac, bit<48> collector_mac, bit<32> src_ip, bit<32> collector_ip, bit<16> src_port, bit<16> collector_port, bit<6> hw_id, bit<4> version), MyEgress.no_report() (default) |
 *
 * Clone session INT_MD_REPORT_SESSION (500) must send to the collector's
 * port. Register int_report_seq[1] (bit<32>): reports sent. Counter
 * int_md_events[8] (packets), indices EV_* below.
 */

#include <core.p4>
#include <v1model.p4>
#include "include/int_md_headers.p4"

/// Field list the report clone keeps: this hop's values, measured in the
/// original packet's egress pass. A macro: p4c wants a literal in the
/// @field_list annotation.
#define REPORT_FL 1

const bit<9>  DROP_PORT = 511;
const bit<32> INSTANCE_EGRESS_CLONE = 2;

/// int_md_events indices.
const bit<32> EV_SOURCE = 0;     // packets that got INT headers here
const bit<32> EV_HOP = 1;        // hops pushed
const bit<32> EV_EXHAUSTED = 2;  // Remaining Hop Count 0: E bit set, nothing pushed
const bit<32> EV_SKIPPED = 3;    // instructions it cannot follow, or no room: nothing pushed
const bit<32> EV_SINK = 4;       // INT removed before a host port
const bit<32> EV_REPORT = 5;     // reports built
const bit<32> EV_BROKEN = 6;     // INT cut short or malformed: dropped at a sink
const bit<32> EV_REMARKED = 7;   // host packets with the INT DSCP set to 0
const bit<32> EV_COUNT = 8;

struct headers_t {
    // The report's outer headers (report clones only).
    ethernet_t        rep_ethernet;
    ipv4_t            rep_ipv4;
    udp_t             rep_udp;
    tr2_group_t       tr2_group;
    tr2_report_t      tr2_report;
    tr2_int_t         tr2_int;
    tr1_t             tr1;
    // The packet.
    ethernet_t        ethernet;
    ipv4_t            ipv4;
    udp_t             udp;
    tcp_ports_t       tcp_ports;
    int_shim_t        int_shim;
    int_shim_v1_t     int_shim_v1;
    int_md_t          int_md;
    int_md_ds_t       int_md_ds;
    // This hop's metadata, pushed on top of the stack.
    int_node_id_t     hop_node_id;
    int_l1_ports_t    hop_l1_ports;
    int_hop_latency_t hop_latency;
    int_queue_t       hop_queue;
    int_ts64_t        hop_ingress_ts;
    int_ts32_t        hop_ingress_ts_v1;
    int_ts64_t        hop_egress_ts;
    int_ts32_t        hop_egress_ts_v1;
    int_l2_ports_t    hop_l2_ports;
    int_tx_util_t     hop_tx_util;
    int_buffer_t      hop_buffer;
    // The stack upstream hops pushed.
    int_word_t[INT_MD_MAX_WORDS] int_words;
    // The sink's copy of the packet as it carried INT, never emitted: the
    // report clone takes the headers the original has at the end of its
    // egress pass, by when the original has lost its INT.
    ipv4_t            s_ipv4;
    udp_t             s_udp;
    int_shim_t        s_shim;
    int_shim_v1_t     s_shim_v1;
    int_md_t          s_md;
    int_md_ds_t       s_md_ds;
    int_word_t[INT_MD_MAX_WORDS] s_words;
}

struct metadata_t {
    // Forwarding (l3_forward.p4); the ports also key the watchlist.
    bit<16> ecmp_group;
    bit<16> ecmp_select;
    bit<16> l4_sport;
    bit<16> l4_dport;
    // Parser: stack words left to read; raw sum of the stack's 16-bit halves.
    bit<8>  words_left;
    bit<32> stack_sum;
    // What the packet is, from ingress: carries INT this program handles,
    // or INT it could not parse.
    bit<1>  int_ok;
    bit<1>  int_broken;
    // Source: the watchlist entry and int_source_config.
    bit<16> instructions;
    bit<8>  max_hop_cnt;
    bit<1>  by_port;
    bit<4>  int_version;
    bit<16> domain_id;
    // Egress configuration.
    bit<32> node_id;
    bit<1>  sink;
    bit<1>  report_on;
    bit<48> rep_src_mac;
    bit<48> rep_collector_mac;
    bit<32> rep_src_ip;
    bit<32> rep_collector_ip;
    bit<16> rep_src_port;
    bit<16> rep_collector_port;
    bit<6>  rep_hw_id;
    bit<4>  rep_version;
    // Words per hop for an instruction bitmap (count_words).
    bit<16> count_bitmap;
    bit<1>  count_v2;
    bit<5>  hop_words;
    // UDP checksum update: raw sums of the 16-bit words taken out and put in.
    bit<32> csum_del;
    bit<32> csum_add;
    bit<32> csum_tmp;
    // This hop's values; the report clone keeps them.
    @field_list(REPORT_FL)
    bit<16> hop_in_port;
    @field_list(REPORT_FL)
    bit<16> hop_out_port;
    @field_list(REPORT_FL)
    bit<32> hop_latency;
    @field_list(REPORT_FL)
    bit<24> hop_qdepth;
    @field_list(REPORT_FL)
    bit<64> hop_ingress_ts;
    @field_list(REPORT_FL)
    bit<64> hop_egress_ts;
}

counter(EV_COUNT, CounterType.packets) int_md_events;
register<bit<32>>(1) int_report_seq;

parser MyParser(packet_in packet,
                out headers_t hdr,
                inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // Only unfragmented (first) TCP/UDP packets without options carry
        // ports, and only UDP carries INT.
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, IPPROTO_UDP): parse_udp;
            (5, 0, IPPROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp_ports);
        meta.l4_sport = hdr.tcp_ports.srcPort;
        meta.l4_dport = hdr.tcp_ports.dstPort;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_sport = hdr.udp.srcPort;
        meta.l4_dport = hdr.udp.dstPort;
        transition select(hdr.ipv4.dscp, hdr.udp.dstPort) {
            (INT_DSCP, _): parse_int;
            (_, INT_UDP_PORT): parse_int;
            default: accept;
        }
    }

    // The shim's layout depends on the INT version, which is the first
    // nibble of the metadata header right after it. v2.0: Type 1 (INT-MD)
    // with NPT 0 or 1; v1.0: Type 1 (hop-by-hop). Anything else is left
    // unparsed, and forwarded as it is.
    state parse_int {
        bit<40> ahead = packet.lookahead<bit<40>>();
        transition select(ahead[39:32], ahead[7:4]) {
            (8w0x10 &&& 8w0xF8, 4w2): parse_shim_v2;
            (8w0x01, 4w1): parse_shim_v1;
            default: accept;
        }
    }

    state parse_shim_v2 {
        packet.extract(hdr.int_shim);
        packet.extract(hdr.int_md);
        packet.extract(hdr.int_md_ds);
        verify(hdr.int_shim.len >= 3, error.IntBadLength);
        meta.words_left = hdr.int_shim.len - 3;
        transition parse_stack;
    }

    state parse_shim_v1 {
        packet.extract(hdr.int_shim_v1);
        packet.extract(hdr.int_md);
        verify(hdr.int_shim_v1.len >= 3, error.IntBadLength);
        meta.words_left = hdr.int_shim_v1.len - 3;
        transition parse_stack;
    }

    state parse_stack {
        transition select(meta.words_left) {
            0: accept;
            default: parse_word;
        }
    }

    // One stack word; its two halves go into the sum the sink takes out of
    // the UDP checksum.
    state parse_word {
        packet.extract(hdr.int_words.next);
        meta.stack_sum = meta.stack_sum + (bit<32>)hdr.int_words.last.w[31:16]
                                        + (bit<32>)hdr.int_words.last.w[15:0];
        meta.words_left = meta.words_left - 1;
        transition parse_stack;
    }
}

/// A bad checksum sets standard_metadata.checksum_error; like BMv2, the
/// packet is not dropped for it here.
control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.dscp,
              hdr.ipv4.ecn,
              hdr.ipv4.totalLen,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.fragOffset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

/// meta.csum_tmp = raw sum of the 16-bit words the INT headers change in
/// the UDP checksum's coverage: the UDP length twice (header and pseudo
/// header), the destination port, the shim and the metadata header.
control FixedSum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        bit<32> s = (bit<32>)hdr.udp.len + (bit<32>)hdr.udp.len + (bit<32>)hdr.udp.dstPort;
        if (hdr.int_shim.isValid()) {
            s = s + (bit<32>)(hdr.int_shim.int_type ++ hdr.int_shim.npt ++ hdr.int_shim.rsvd
                              ++ hdr.int_shim.len)
                  + (bit<32>)hdr.int_shim.npt_field;
        }
        if (hdr.int_shim_v1.isValid()) {
            s = s + (bit<32>)(hdr.int_shim_v1.int_type ++ hdr.int_shim_v1.rsvd1)
                  + (bit<32>)(hdr.int_shim_v1.len ++ hdr.int_shim_v1.dscp ++ hdr.int_shim_v1.rsvd2);
        }
        if (hdr.int_md.isValid()) {
            s = s + (bit<32>)(hdr.int_md.ver ++ hdr.int_md.flags ++ hdr.int_md.flag8
                              ++ hdr.int_md.rsvd[9:3])
                  + (bit<32>)(hdr.int_md.rsvd[2:0] ++ hdr.int_md.hop_ml
                              ++ hdr.int_md.remaining_hop_cnt)
                  + (bit<32>)hdr.int_md.instructions + (bit<32>)hdr.int_md.domain_id;
        }
        if (hdr.int_md_ds.isValid()) {
            s = s + (bit<32>)hdr.int_md_ds.ds_instructions + (bit<32>)hdr.int_md_ds.ds_flags;
        }
        meta.csum_tmp = s;
    }
}

/// RFC 1624 update of a present UDP checksum: C' = ~(~C - removed + added)
/// in ones' complement, where subtracting is adding the complement. A
/// result of 0 is sent as 0xFFFF (RFC 768), so the sink's result is the
/// original checksum bit for bit.
control UdpChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        if (hdr.udp.checksum != 0) {
            bit<32> d = (meta.csum_del & 0xFFFF) + (meta.csum_del >> 16);
            d = (d & 0xFFFF) + (d >> 16);
            bit<32> a = (meta.csum_add & 0xFFFF) + (meta.csum_add >> 16);
            a = (a & 0xFFFF) + (a >> 16);
            bit<32> s = (bit<32>)(~hdr.udp.checksum) + (bit<32>)(~(bit<16>)d) + a;
            s = (s & 0xFFFF) + (s >> 16);
            s = (s & 0xFFFF) + (s >> 16);
            bit<16> c = ~(bit<16>)s;
            if (c == 0) {
                c = 0xFFFF;
            }
            hdr.udp.checksum = c;
        }
    }
}

/// meta.hop_words = words one hop pushes for meta.count_bitmap: one per
/// bit set, two for the 8-byte items (v2.0 bits 4, 5, 6; v1.0 bit 6).
control CountWords(inout metadata_t meta) {
    apply {
        bit<16> b = meta.count_bitmap;
        meta.hop_words = (bit<5>)b[15:15] + (bit<5>)b[14:14] + (bit<5>)b[13:13]
            + (bit<5>)b[12:12] + (bit<5>)b[11:11] + (bit<5>)b[10:10] + (bit<5>)b[9:9]
            + (bit<5>)b[8:8] + (bit<5>)b[7:7] + (bit<5>)b[6:6] + (bit<5>)b[5:5]
            + (bit<5>)b[4:4] + (bit<5>)b[3:3] + (bit<5>)b[2:2] + (bit<5>)b[1:1]
            + (bit<5>)b[0:0]
            + (bit<5>)b[9:9]
            + (bit<5>)(b[11:11] & meta.count_v2) + (bit<5>)(b[10:10] & meta.count_v2);
    }
}

/// The INT source: shim and metadata header after the UDP header, INT
/// signalled by DSCP or UDP port. v1.0 has no port option (its shim has no
/// room for the original port), so a v1.0 domain always uses the DSCP.
control IntSource(inout headers_t hdr, inout metadata_t meta) {
    FixedSum() sum_before;
    FixedSum() sum_after;
    UdpChecksum() udp_checksum;
    CountWords() count_words;

    apply {
        bit<1> v2 = (meta.int_version == INT_VERSION_1) ? 1w0 : 1w1;
        // Instructions this program fills: bits 0-8 (v2.0), 0-7 (v1.0).
        bit<16> bitmap = meta.instructions & ((v2 == 1) ? 16w0xFF80 : 16w0xFF00);
        meta.count_bitmap = bitmap;
        meta.count_v2 = v2;
        count_words.apply(meta);
        sum_before.apply(hdr, meta);
        meta.csum_del = meta.csum_tmp;
        bit<16> added;
        hdr.int_md.setValid();
        hdr.int_md.flags = 0;
        hdr.int_md.flag8 = 0;
        hdr.int_md.rsvd = 0;
        hdr.int_md.hop_ml = meta.hop_words;
        hdr.int_md.remaining_hop_cnt = meta.max_hop_cnt;
        hdr.int_md.instructions = bitmap;
        if (v2 == 1) {
            hdr.int_shim.setValid();
            hdr.int_shim.int_type = INT_TYPE_MD;
            hdr.int_shim.rsvd = 0;
            hdr.int_shim.len = 3;
            if (meta.by_port == 1) {
                hdr.int_shim.npt = NPT_UDP_PORT;
                hdr.int_shim.npt_field = hdr.udp.dstPort;
                hdr.udp.dstPort = INT_UDP_PORT;
            } else {
                hdr.int_shim.npt = NPT_DSCP;
                hdr.int_shim.npt_field = 8w0 ++ hdr.ipv4.dscp ++ 2w0;
                hdr.ipv4.dscp = INT_DSCP;
            }
            hdr.int_md.ver = INT_VERSION_2;
            hdr.int_md.domain_id = meta.domain_id;
            hdr.int_md_ds.setValid();
            hdr.int_md_ds.ds_instructions = 0;
            hdr.int_md_ds.ds_flags = 0;
            added = 16;
        } else {
            hdr.int_shim_v1.setValid();
            hdr.int_shim_v1.int_type = INT_TYPE_HOP_BY_HOP;
            hdr.int_shim_v1.rsvd1 = 0;
            hdr.int_shim_v1.len = 3;
            hdr.int_shim_v1.dscp = hdr.ipv4.dscp;
            hdr.int_shim_v1.rsvd2 = 0;
            hdr.ipv4.dscp = INT_DSCP;
            hdr.int_md.ver = INT_VERSION_1;
            hdr.int_md.domain_id = 0;
            added = 12;
        }
        hdr.udp.len = hdr.udp.len + added;
        hdr.ipv4.totalLen = hdr.ipv4.totalLen + added;
        sum_after.apply(hdr, meta);
        meta.csum_add = meta.csum_tmp;
        udp_checksum.apply(hdr, meta);
        meta.int_ok = 1;
        int_md_events.count(EV_SOURCE);
    }
}

/// This switch's hop: its metadata on top of the stack, from meta.hop_*
/// and meta.node_id. Nothing is pushed (and Remaining Hop Count stays) when
/// the bitmap asks for a reserved item, Hop ML disagrees with it, or the
/// stack would outgrow the shim's 8-bit Length (the specification lets a
/// hop that cannot add Hop ML words skip); with Remaining Hop Count 0 only
/// the E bit is set.
control IntHop(inout headers_t hdr, inout metadata_t meta) {
    FixedSum() sum_before;
    FixedSum() sum_after;
    UdpChecksum() udp_checksum;
    CountWords() count_words;

    apply {
        bit<1> v2 = (hdr.int_md.ver == INT_VERSION_2) ? 1w1 : 1w0;
        bit<16> bitmap = hdr.int_md.instructions;
        bit<16> reserved = bitmap & ((v2 == 1) ? 16w0x007F : 16w0x00FF);
        meta.count_bitmap = bitmap;
        meta.count_v2 = v2;
        count_words.apply(meta);
        sum_before.apply(hdr, meta);
        meta.csum_del = meta.csum_tmp;
        meta.csum_add = 0;
        bit<16> shim_words;
        if (v2 == 1) {
            shim_words = (bit<16>)hdr.int_shim.len;
        } else {
            shim_words = (bit<16>)hdr.int_shim_v1.len;
        }
        bit<1> changed = 1;
        if (hdr.int_md.remaining_hop_cnt == 0) {
            if (v2 == 1) {
                hdr.int_md.flags = hdr.int_md.flags | V2_FLAG_E;
            } else {
                hdr.int_md.flags = hdr.int_md.flags | V1_FLAG_E;
            }
            int_md_events.count(EV_EXHAUSTED);
        } else if (reserved != 0 || meta.hop_words == 0
                   || meta.hop_words != hdr.int_md.hop_ml
                   || shim_words + (bit<16>)meta.hop_words > 255) {
            changed = 0;
            int_md_events.count(EV_SKIPPED);
        } else {
            if (bitmap[15:15] == 1) {
                hdr.hop_node_id.setValid();
                hdr.hop_node_id.node_id = meta.node_id;
                meta.csum_add = meta.csum_add + (bit<32>)meta.node_id[31:16]
                                              + (bit<32>)meta.node_id[15:0];
            }
            if (bitmap[14:14] == 1) {
                hdr.hop_l1_ports.setValid();
                hdr.hop_l1_ports.ingress_port = meta.hop_in_port;
                hdr.hop_l1_ports.egress_port = meta.hop_out_port;
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_in_port
                                              + (bit<32>)meta.hop_out_port;
            }
            if (bitmap[13:13] == 1) {
                hdr.hop_latency.setValid();
                hdr.hop_latency.hop_latency = meta.hop_latency;
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_latency[31:16]
                                              + (bit<32>)meta.hop_latency[15:0];
            }
            if (bitmap[12:12] == 1) {
                hdr.hop_queue.setValid();
                hdr.hop_queue.queue_id = 0;
                hdr.hop_queue.occupancy = meta.hop_qdepth;
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_qdepth[23:16]
                                              + (bit<32>)meta.hop_qdepth[15:0];
            }
            if (bitmap[11:11] == 1) {
                if (v2 == 1) {
                    hdr.hop_ingress_ts.setValid();
                    hdr.hop_ingress_ts.ts = meta.hop_ingress_ts;
                    meta.csum_add = meta.csum_add + (bit<32>)meta.hop_ingress_ts[63:48]
                                                  + (bit<32>)meta.hop_ingress_ts[47:32];
                } else {
                    hdr.hop_ingress_ts_v1.setValid();
                    hdr.hop_ingress_ts_v1.ts = meta.hop_ingress_ts[31:0];
                }
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_ingress_ts[31:16]
                                              + (bit<32>)meta.hop_ingress_ts[15:0];
            }
            if (bitmap[10:10] == 1) {
                if (v2 == 1) {
                    hdr.hop_egress_ts.setValid();
                    hdr.hop_egress_ts.ts = meta.hop_egress_ts;
                    meta.csum_add = meta.csum_add + (bit<32>)meta.hop_egress_ts[63:48]
                                                  + (bit<32>)meta.hop_egress_ts[47:32];
                } else {
                    hdr.hop_egress_ts_v1.setValid();
                    hdr.hop_egress_ts_v1.ts = meta.hop_egress_ts[31:0];
                }
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_egress_ts[31:16]
                                              + (bit<32>)meta.hop_egress_ts[15:0];
            }
            if (bitmap[9:9] == 1) {
                // v1model has no logical ports: level 2 is the port itself.
                hdr.hop_l2_ports.setValid();
                hdr.hop_l2_ports.ingress_port = (bit<32>)meta.hop_in_port;
                hdr.hop_l2_ports.egress_port = (bit<32>)meta.hop_out_port;
                meta.csum_add = meta.csum_add + (bit<32>)meta.hop_in_port
                                              + (bit<32>)meta.hop_out_port;
            }
            if (bitmap[8:8] == 1) {
                // No utilization in v1model: the "not available" value.
                hdr.hop_tx_util.setValid();
                hdr.hop_tx_util.util = 0xFFFFFFFF;
                meta.csum_add = meta.csum_add + 0xFFFF + 0xFFFF;
            }
            if (bitmap[7:7] == 1) {
                // No shared-buffer occupancy in v1model: "not available".
                hdr.hop_buffer.setValid();
                hdr.hop_buffer.buffer_id = 0xFF;
                hdr.hop_buffer.occupancy = 0xFFFFFF;
                meta.csum_add = meta.csum_add + 0xFFFF + 0xFFFF;
            }
            bit<16> bytes = (bit<16>)hdr.int_md.hop_ml << 2;
            hdr.int_md.remaining_hop_cnt = hdr.int_md.remaining_hop_cnt - 1;
            if (v2 == 1) {
                hdr.int_shim.len = hdr.int_shim.len + (bit<8>)hdr.int_md.hop_ml;
            } else {
                hdr.int_shim_v1.len = hdr.int_shim_v1.len + (bit<8>)hdr.int_md.hop_ml;
            }
            hdr.udp.len = hdr.udp.len + bytes;
            hdr.ipv4.totalLen = hdr.ipv4.totalLen + bytes;
            int_md_events.count(EV_HOP);
        }
        if (changed == 1) {
            sum_after.apply(hdr, meta);
            meta.csum_add = meta.csum_add + meta.csum_tmp;
            udp_checksum.apply(hdr, meta);
        }
    }
}

/// The sink, on the packet bound for the host: keep a copy of the INT
/// headers and stack for the report clone, then remove them and put the
/// original DSCP or UDP port and the lengths back.
control IntSink(inout headers_t hdr, inout metadata_t meta) {
    FixedSum() sum_before;
    FixedSum() sum_after;
    UdpChecksum() udp_checksum;

    apply {
        sum_before.apply(hdr, meta);
        meta.csum_del = meta.csum_tmp + meta.stack_sum;
        hdr.s_ipv4 = hdr.ipv4;
        hdr.s_udp = hdr.udp;
        hdr.s_shim = hdr.int_shim;
        hdr.s_shim_v1 = hdr.int_shim_v1;
        hdr.s_md = hdr.int_md;
        hdr.s_md_ds = hdr.int_md_ds;
        hdr.s_words = hdr.int_words;
        bit<16> removed;
        if (hdr.int_shim.isValid()) {
            removed = 4 + ((bit<16>)hdr.int_shim.len << 2);
            if (hdr.int_shim.npt == NPT_UDP_PORT) {
                hdr.udp.dstPort = hdr.int_shim.npt_field;
            } else {
                hdr.ipv4.dscp = hdr.int_shim.npt_field[7:2];
            }
        } else {
            removed = (bit<16>)hdr.int_shim_v1.len << 2;
            hdr.ipv4.dscp = hdr.int_shim_v1.dscp;
        }
        hdr.udp.len = hdr.udp.len - removed;
        hdr.ipv4.totalLen = hdr.ipv4.totalLen - removed;
        hdr.int_shim.setInvalid();
        hdr.int_shim_v1.setInvalid();
        hdr.int_md.setInvalid();
        hdr.int_md_ds.setInvalid();
        hdr.int_words.pop_front(INT_MD_MAX_WORDS);
        sum_after.apply(hdr, meta);
        meta.csum_add = meta.csum_tmp;
        udp_checksum.apply(hdr, meta);
        int_md_events.count(EV_SINK);
    }
}

/// The report clone (egress port: the collector's): the packet as it
/// carried INT, with the sink's own hop pushed, behind the report headers;
/// cut after the metadata stack (the inner IPv4 total length still says
/// how long the packet was).
control IntReport(inout headers_t hdr, inout metadata_t meta) {
    IntHop() sink_hop;

    apply {
        hdr.ipv4 = hdr.s_ipv4;
        hdr.udp = hdr.s_udp;
        hdr.int_shim = hdr.s_shim;
        hdr.int_shim_v1 = hdr.s_shim_v1;
        hdr.int_md = hdr.s_md;
        hdr.int_md_ds = hdr.s_md_ds;
        hdr.int_words = hdr.s_words;
        hdr.ethernet.setInvalid();
        sink_hop.apply(hdr, meta);

        bit<16> int_bytes;
        if (hdr.int_shim.isValid()) {
            int_bytes = 4 + ((bit<16>)hdr.int_shim.len << 2);
        } else {
            int_bytes = (bit<16>)hdr.int_shim_v1.len << 2;
        }
        bit<16> inner = IPV4_BYTES + UDP_BYTES + int_bytes;
        bit<32> seq;
        int_report_seq.read(seq, 0);
        int_report_seq.write(0, seq + 1);
        bit<16> tr_bytes;
        if (meta.rep_version == TR_VERSION_1) {
            hdr.tr1.setValid();
            hdr.tr1.ver = TR_VERSION_1;
            hdr.tr1.len = 4;
            hdr.tr1.nprot = TR1_NPROT_IPV4;
            hdr.tr1.rep_md_bits = 0;
            hdr.tr1.rsvd = 0;
            hdr.tr1.d = 0;
            hdr.tr1.q = 0;
            hdr.tr1.f = 1;
            hdr.tr1.hw_id = meta.rep_hw_id;
            hdr.tr1.switch_id = meta.node_id;
            hdr.tr1.seq = seq;
            hdr.tr1.ingress_ts = meta.hop_ingress_ts[31:0];
            tr_bytes = TR1_BYTES;
        } else {
            hdr.tr2_group.setValid();
            hdr.tr2_group.ver = TR_VERSION_2;
            hdr.tr2_group.hw_id = meta.rep_hw_id;
            hdr.tr2_group.seq = seq[21:0];
            hdr.tr2_group.node_id = meta.node_id;
            // Report Length: words after its first, i.e. the 2 fixed words
            // of the INT main contents and the inner packet; 0xFF for 255
            // words or more (to the end of the payload).
            bit<16> words = 2 + (inner >> 2);
            hdr.tr2_report.setValid();
            hdr.tr2_report.rep_type = TR2_REP_TYPE_INT;
            hdr.tr2_report.in_type = TR2_IN_TYPE_IPV4;
            if (words >= 0xFF) {
                hdr.tr2_report.report_length = TR2_REPORT_LENGTH_TO_END;
            } else {
                hdr.tr2_report.report_length = (bit<8>)words;
            }
            hdr.tr2_report.md_length = 0;
            hdr.tr2_report.d = 0;
            hdr.tr2_report.q = 0;
            hdr.tr2_report.f = 1;
            hdr.tr2_report.i = 0;
            hdr.tr2_report.rsvd = 0;
            hdr.tr2_int.setValid();
            hdr.tr2_int.rep_md_bits = 0;
            if (hdr.int_md.ver == INT_VERSION_2) {
                hdr.tr2_int.domain_id = hdr.int_md.domain_id;
            } else {
                hdr.tr2_int.domain_id = 0;
            }
            hdr.tr2_int.ds_md_bits = 0;
            hdr.tr2_int.ds_md_status = 0;
            tr_bytes = TR2_BYTES;
        }
        hdr.rep_udp.setValid();
        hdr.rep_udp.srcPort = meta.rep_src_port;
        hdr.rep_udp.dstPort = meta.rep_collector_port;
        hdr.rep_udp.len = UDP_BYTES + tr_bytes + inner;
        hdr.rep_udp.checksum = 0;
        hdr.rep_ipv4.setValid();
        hdr.rep_ipv4.version = 4;
        hdr.rep_ipv4.ihl = 5;
        hdr.rep_ipv4.dscp = 0;
        hdr.rep_ipv4.ecn = 0;
        hdr.rep_ipv4.totalLen = IPV4_BYTES + hdr.rep_udp.len;
        hdr.rep_ipv4.identification = 0;
        hdr.rep_ipv4.flags = 2;  // DF: the identification does not count
        hdr.rep_ipv4.fragOffset = 0;
        hdr.rep_ipv4.ttl = 64;
        hdr.rep_ipv4.protocol = IPPROTO_UDP;
        hdr.rep_ipv4.hdrChecksum = 0;
        hdr.rep_ipv4.srcAddr = meta.rep_src_ip;
        hdr.rep_ipv4.dstAddr = meta.rep_collector_ip;
        hdr.rep_ethernet.setValid();
        hdr.rep_ethernet.dstAddr = meta.rep_collector_mac;
        hdr.rep_ethernet.srcAddr = meta.rep_src_mac;
        hdr.rep_ethernet.etherType = ETHERTYPE_IPV4;
        truncate((bit<32>)(ETHERNET_BYTES + hdr.rep_ipv4.totalLen));
        int_md_events.count(EV_REPORT);
    }
}

control MyIngress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    IntSource() int_source;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /// Next hop reached: rewrite the MACs (the router's own address is the
    /// one the packet was sent to) and leave by `port`.
    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /// Several equal-cost next hops: pick one of `count` members of
    /// `group` by a CRC-16 of the 5-tuple, so a flow keeps its path.
    action set_ecmp(bit<16> group, bit<16> count) {
        meta.ecmp_group = group;
        hash(meta.ecmp_select, HashAlgorithm.crc16, (bit<16>) 0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
               meta.l4_sport, meta.l4_dport },
             count);
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            ipv4_forward;
            set_ecmp;
            drop;
        }
        size = 1024;
        default_action = drop();
    }

    table ecmp_nhop {
        key = {
            meta.ecmp_group: exact;
            meta.ecmp_select: exact;
        }
        actions = {
            ipv4_forward;
            drop;
        }
        size = 4096;
        default_action = drop();
    }

    /// A port that faces a host: packets from it enter the INT domain here.
    action set_source_port() {
    }

    table int_source_port {
        key = {
            standard_metadata.ingress_port: exact;
        }
        actions = {
            set_source_port;
            NoAction;
        }
        size = 512;
        default_action = NoAction();
    }

    /// A watched flow: INT with these instructions (bit 0 = MSB; bits this
    /// program cannot fill are cleared) for at most `max_hop_cnt` hops.
    action int_watch(bit<16> instructions, bit<8> max_hop_cnt) {
        meta.instructions = instructions;
        meta.max_hop_cnt = max_hop_cnt;
    }

    table int_watchlist {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.dstAddr: ternary;
            hdr.ipv4.protocol: ternary;
            meta.l4_sport: range;
            meta.l4_dport: range;
        }
        actions = {
            int_watch;
            NoAction;
        }
        size = 1024;
        default_action = NoAction();
    }

    /// The domain's choices: signal INT by UDP port (1) or DSCP (0), INT
    /// version 2 (v2.0) or 1 (v1.0, always by DSCP), Domain Specific ID.
    action set_source_config(bit<1> by_port, bit<4> int_version, bit<16> domain_id) {
        meta.by_port = by_port;
        meta.int_version = int_version;
        meta.domain_id = domain_id;
    }

    table int_source_config {
        actions = {
            set_source_config;
        }
        default_action = set_source_config(0, 2, 0);
    }

    apply {
        if (hdr.ipv4.isValid()) {
            // RFC 1812 5.3.1: a packet whose TTL would reach 0 is not
            // forwarded (TTL 0 on arrival included).
            if (hdr.ipv4.ttl <= 1) {
                drop();
            } else {
                switch (ipv4_lpm.apply().action_run) {
                    set_ecmp: { ecmp_nhop.apply(); }
                }
                if (hdr.int_md.isValid()) {
                    if (standard_metadata.parser_error == error.NoError) {
                        meta.int_ok = 1;
                    } else {
                        meta.int_broken = 1;
                    }
                }
                if (int_source_port.apply().hit) {
                    // From a host: nothing after its UDP header is INT of
                    // this domain (it is forwarded as it came).
                    meta.int_ok = 0;
                    meta.int_broken = 0;
                    if (hdr.udp.isValid() && !hdr.int_md.isValid()
                        && standard_metadata.parser_error == error.NoError
                        && standard_metadata.egress_spec != DROP_PORT) {
                        if (int_watchlist.apply().hit) {
                            int_source_config.apply();
                            int_source.apply(hdr, meta);
                        }
                    }
                    if (meta.int_ok == 0 && hdr.ipv4.dscp == INT_DSCP) {
                        hdr.ipv4.dscp = 0;
                        int_md_events.count(EV_REMARKED);
                    }
                }
            }
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    IntHop() int_hop;
    IntSink() int_sink;
    IntReport() int_report;

    /// This switch's node id in its hops and reports.
    action set_node_id(bit<32> node_id) {
        meta.node_id = node_id;
    }

    table int_node_config {
        actions = {
            set_node_id;
        }
        default_action = set_node_id(0);
    }

    /// A port that faces a host: INT leaves the domain here.
    action set_sink_port() {
        meta.sink = 1;
    }

    table int_sink_port {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_sink_port;
            NoAction;
        }
        size = 512;
        default_action = NoAction();
    }

    /// Where reports go: the outer Ethernet/IPv4/UDP addresses, the
    /// hardware id, and the Telemetry Report version (1 or 2).
    action set_report(bit<48> src_mac, bit<48> collector_mac, bit<32> src_ip,
                      bit<32> collector_ip, bit<16> src_port, bit<16> collector_port,
                      bit<6> hw_id, bit<4> version) {
        meta.report_on = 1;
        meta.rep_src_mac = src_mac;
        meta.rep_collector_mac = collector_mac;
        meta.rep_src_ip = src_ip;
        meta.rep_collector_ip = collector_ip;
        meta.rep_src_port = src_port;
        meta.rep_collector_port = collector_port;
        meta.rep_hw_id = hw_id;
        meta.rep_version = version;
    }

    /// Sinks remove INT without reporting.
    action no_report() {
        meta.report_on = 0;
    }

    table int_report_config {
        actions = {
            set_report;
            no_report;
        }
        default_action = no_report();
    }

    /// This hop's values from v1model's metadata (microseconds, packets).
    action measure() {
        meta.hop_in_port = (bit<16>)standard_metadata.ingress_port;
        meta.hop_out_port = (bit<16>)standard_metadata.egress_port;
        meta.hop_latency = (bit<32>)(standard_metadata.egress_global_timestamp
                                     - standard_metadata.ingress_global_timestamp);
        meta.hop_qdepth = (bit<24>)standard_metadata.enq_qdepth;
        meta.hop_ingress_ts = (bit<64>)standard_metadata.ingress_global_timestamp;
        meta.hop_egress_ts = (bit<64>)standard_metadata.egress_global_timestamp;
    }

    apply {
        int_node_config.apply();
        int_report_config.apply();
        if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            if (meta.report_on == 1 && hdr.s_md.isValid()) {
                int_report.apply(hdr, meta);
            } else {
                mark_to_drop(standard_metadata);
            }
        } else if (meta.int_ok == 1 || meta.int_broken == 1) {
            int_sink_port.apply();
            if (meta.int_broken == 1) {
                // INT this switch could not parse cannot be removed: it
                // must not reach a host.
                if (meta.sink == 1) {
                    mark_to_drop(standard_metadata);
                    int_md_events.count(EV_BROKEN);
                }
            } else {
                measure();
                if (meta.sink == 1) {
                    if (meta.report_on == 1) {
                        clone_preserving_field_list(CloneType.E2E, INT_MD_REPORT_SESSION,
                                                    REPORT_FL);
                    }
                    bit<1> discard = 0;
                    if (hdr.int_md.ver == INT_VERSION_2
                        && (hdr.int_md.flags & V2_FLAG_D) != 0) {
                        discard = 1;
                    }
                    int_sink.apply(hdr, meta);
                    if (discard == 1) {
                        mark_to_drop(standard_metadata);
                    }
                } else {
                    int_hop.apply(hdr, meta);
                }
            }
        }
    }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.dscp,
              hdr.ipv4.ecn,
              hdr.ipv4.totalLen,
              hdr.ipv4.identification,
              hdr.ipv4.flags,
              hdr.ipv4.fragOffset,
              hdr.ipv4.ttl,
              hdr.ipv4.protocol,
              hdr.ipv4.srcAddr,
              hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
        update_checksum(
            hdr.rep_ipv4.isValid(),
            { hdr.rep_ipv4.version,
              hdr.rep_ipv4.ihl,
              hdr.rep_ipv4.dscp,
              hdr.rep_ipv4.ecn,
              hdr.rep_ipv4.totalLen,
              hdr.rep_ipv4.identification,
              hdr.rep_ipv4.flags,
              hdr.rep_ipv4.fragOffset,
              hdr.rep_ipv4.ttl,
              hdr.rep_ipv4.protocol,
              hdr.rep_ipv4.srcAddr,
              hdr.rep_ipv4.dstAddr },
            hdr.rep_ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.rep_ethernet);
        packet.emit(hdr.rep_ipv4);
        packet.emit(hdr.rep_udp);
        packet.emit(hdr.tr2_group);
        packet.emit(hdr.tr2_report);
        packet.emit(hdr.tr2_int);
        packet.emit(hdr.tr1);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp_ports);
        packet.emit(hdr.int_shim);
        packet.emit(hdr.int_shim_v1);
        packet.emit(hdr.int_md);
        packet.emit(hdr.int_md_ds);
        packet.emit(hdr.hop_node_id);
        packet.emit(hdr.hop_l1_ports);
        packet.emit(hdr.hop_latency);
        packet.emit(hdr.hop_queue);
        packet.emit(hdr.hop_ingress_ts);
        packet.emit(hdr.hop_ingress_ts_v1);
        packet.emit(hdr.hop_egress_ts);
        packet.emit(hdr.hop_egress_ts_v1);
        packet.emit(hdr.hop_l2_ports);
        packet.emit(hdr.hop_tx_util);
        packet.emit(hdr.hop_buffer);
        packet.emit(hdr.int_words);
    }
}

V1Switch(
    MyParser(),
    MyVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    MyComputeChecksum(),
    MyDeparser()
) main;
