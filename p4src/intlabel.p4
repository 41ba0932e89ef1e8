/*
 * intlabel: INT-label's data plane for v1model (BMv2 simple_switch).
 *
 * Song et al., "INT-label: Lightweight In-band Network-Wide Telemetry via
 * Distributed Labeling": every egress port labels (writes an INT item into)
 * sampled user packets; the last hop exports the items to the collector as
 * a UDP telemetry report and hands the host the packet as if INT did not
 * exist. Packet formats and the control-plane contract are documented in
 * docs/intlabel_format.md.
 *
 * - Forwarding: IPv4 LPM with ECMP groups, MAC rewrite, TTL decrement,
 *   header checksum (the design of l3_forward.p4).
 * - Labeling, per egress port (paper section 3, Algorithms 1-3, 5):
 *   Base A labels when CT - LT > T; Base B, otherwise and when
 *   CT - LT >= T1, labels with probability f(INT_num), f in {F1, F2, F3};
 *   Pro divides T and T1 by 2^S, S per port in a table, S >= 48 labels
 *   every packet. A port that never labeled labels its first packet.
 * - Specific flows (section 3.3): a flow marked by MyIngress.specific_flow
 *   starts with INT_num = MAX_hop and is labeled by every hop.
 * - Last hop (MyEgress.last_hop marks host ports): the sink labels like any
 *   hop, saves the items in metadata, restores the packet and makes an
 *   egress-to-egress clone (session REPORT_SESSION) that becomes the report.
 */

#include <core.p4>
#include <v1model.p4>
#include "include/intlabel_headers.p4"

/// Clone session of the telemetry report; the controller maps it to the
/// collector's port (simple_switch_CLI mirroring_add / P4Runtime
/// CloneSessionEntry).
const bit<32> REPORT_SESSION = 500;
/// Field list of the metadata kept by the report clone (@field_list(1)).
const bit<8> REPORT_FIELD_LIST = 1;

/// Labeling modes and probability functions (MyEgress.set_config).
const bit<2> MODE_BASE_A = 0;
const bit<2> MODE_BASE_B = 1;
const bit<2> F1 = 0;  // 0 when INT_num = 0, else 1
const bit<2> F2 = 1;  // INT_num / (MAX_hop - 1)
const bit<2> F3 = 2;  // INT_num / (MAX_hop - 1) * (CT - LT) / T

/// Pro: a shift of at least the width of the timestamps turns the interval
/// T >> S into 0; from there on the port labels every packet.
const bit<8> LABEL_ALL_SHIFT = 48;

/// standard_metadata.instance_type of an egress-to-egress clone (BMv2
/// simple_switch PktInstanceType::PKT_INSTANCE_TYPE_EGRESS_CLONE).
const bit<32> INSTANCE_EGRESS_CLONE = 2;

const bit<8> REPORT_TTL = 64;

struct headers_t {
    ethernet_t         ethernet;
    // Telemetry report (valid only in the report clone).
    ipv4_t             rep_ipv4;
    udp_t              rep_udp;
    report_t           report;
    int_item_word_t[INT_MAX_ITEMS] rep_items;
    // The (possibly labeled) packet.
    ipv4_t             ipv4;
    int_option_t       int_option;
    int_item_t[INT_MAX_ITEMS] int_items;
    l4_ports_t         l4;
}

struct metadata_t {
    // Flow identity: the original protocol (NH of a labeled packet) and the
    // L4 ports, 0 when the packet has none.
    bit<8>  l4_proto;
    bit<16> l4_sport;
    bit<16> l4_dport;
    bit<16> ecmp_group;
    bit<16> ecmp_count;
    bit<16> ecmp_select;
    bit<1>  specific;       // set by MyIngress.specific_flow
    bit<8>  item_count;     // INT items in the packet (parsed + pushed)
    // MyEgress.int_config
    bit<32> switch_id;
    bit<48> interval;       // T, microseconds
    bit<48> rest;           // T1, microseconds
    bit<8>  max_hop;
    bit<2>  f;
    bit<2>  mode;
    bit<8>  shift;          // MyEgress.port_shift: S
    bit<1>  last_hop;       // MyEgress.last_hop
    // Kept by the report clone.
    @field_list(1) bit<4>   rep_flags;
    @field_list(1) bit<8>   rep_int_num;
    @field_list(1) bit<8>   rep_count;
    @field_list(1) bit<256> rep_item0;
    @field_list(1) bit<256> rep_item1;
    @field_list(1) bit<256> rep_item2;
    @field_list(1) bit<256> rep_item3;
    @field_list(1) bit<256> rep_item4;
    @field_list(1) bit<256> rep_item5;
    @field_list(1) bit<256> rep_item6;
    @field_list(1) bit<256> rep_item7;
}

/// An item as one word, in wire order (the report carries it unchanged).
bit<256> pack_item(in int_item_t it) {
    return it.switch_id ++ it.ingress_port ++ it.egress_port ++ it.ingress_ts
        ++ it.label_ts ++ it.hop_latency ++ it.flags ++ it.enq_qdepth
        ++ it.reserved ++ it.deq_qdepth;
}

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
        meta.l4_proto = hdr.ipv4.protocol;
        // INT follows a 20-byte header only: a packet with IPv4 options is
        // never labeled. Ports are read from first fragments without
        // options (as l3_forward), else they count as 0.
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, _, IPPROTO_INT): parse_int_option;
            (5, 0, IPPROTO_TCP): parse_l4;
            (5, 0, IPPROTO_UDP): parse_l4;
            default: accept;
        }
    }

    state parse_int_option {
        packet.extract(hdr.int_option);
        meta.l4_proto = hdr.int_option.nh;
        transition parse_int_item;
    }

    /// Items up to the one flagged bottom; more than INT_MAX_ITEMS ends in
    /// error.StackOutOfBounds.
    state parse_int_item {
        packet.extract(hdr.int_items.next);
        meta.item_count = meta.item_count + 1;
        transition select(hdr.int_items.last.flags) {
            ITEM_FLAG_BOTTOM &&& ITEM_FLAG_BOTTOM: parse_after_int;
            default: parse_int_item;
        }
    }

    state parse_after_int {
        transition select(hdr.ipv4.fragOffset, hdr.int_option.nh) {
            (0, IPPROTO_TCP): parse_l4;
            (0, IPPROTO_UDP): parse_l4;
            default: accept;
        }
    }

    state parse_l4 {
        packet.extract(hdr.l4);
        meta.l4_sport = hdr.l4.srcPort;
        meta.l4_dport = hdr.l4.dstPort;
        transition accept;
    }
}

/// A bad checksum sets standard_metadata.checksum_error; as on BMv2 the
/// packet is not dropped for it.
control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version,
              hdr.ipv4.ihl,
              hdr.ipv4.diffserv,
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

control MyIngress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
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

    /// The destination is reached over `count` equal-cost next hops,
    /// members 0 .. count-1 of ecmp_nhop's group `group`.
    action set_ecmp(bit<16> group, bit<16> count) {
        meta.ecmp_group = group;
        meta.ecmp_count = count;
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

    /// Section 3.3: flows whose every hop must label them. Installed on the
    /// flows' first-hop switch.
    action mark_specific() {
        meta.specific = 1;
    }

    table specific_flow {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.dstAddr: ternary;
            meta.l4_proto: ternary;
            meta.l4_sport: ternary;
            meta.l4_dport: ternary;
        }
        actions = {
            mark_specific;
            NoAction;
        }
        size = 1024;
        default_action = NoAction();
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
        } else if (hdr.int_option.isValid()
                   && standard_metadata.parser_error != error.NoError) {
            // Truncated INT, or more items than the stack holds.
            drop();
        } else if (hdr.ipv4.ttl <= 1) {
            // RFC 1812 5.3.1: a packet whose TTL would reach 0.
            drop();
        } else {
            switch (ipv4_lpm.apply().action_run) {
                set_ecmp: {
                    // The original protocol (NH), so that labeling never
                    // moves a flow to another path.
                    hash(meta.ecmp_select, HashAlgorithm.crc16, (bit<16>)0,
                         { hdr.ipv4.srcAddr,
                           hdr.ipv4.dstAddr,
                           meta.l4_proto,
                           meta.l4_sport,
                           meta.l4_dport },
                         meta.ecmp_count);
                    ecmp_nhop.apply();
                }
            }
            specific_flow.apply();
        }
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    /// Reg1 of the paper: the last label time LT of each egress port.
    register<bit<48>>(512) last_label_time;
    /// 1 once the port has labeled a packet: a port that never labeled has
    /// no LT, and labels its first packet.
    register<bit<1>>(512) has_labeled;

    action set_config(bit<32> switch_id, bit<48> T, bit<48> T1, bit<8> max_hop,
                      bit<2> f, bit<2> mode) {
        meta.switch_id = switch_id;
        meta.interval = T;
        meta.rest = T1;
        meta.max_hop = max_hop;
        meta.f = f;
        meta.mode = mode;
    }

    /// Per-switch parameters, one default action the controller modifies.
    /// Defaults: the paper's T = 50 ms, T1 = 0, MAX_hop = 5, F1, Base A.
    table int_config {
        key = { }
        actions = {
            set_config;
        }
        default_action = set_config(0, 50000, 0, 5, F1, MODE_BASE_A);
    }

    action set_shift(bit<8> s) {
        meta.shift = s;
    }

    /// Pro (Algorithm 3): the controller's shift S per egress port.
    table port_shift {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_shift;
        }
        size = 512;
        default_action = set_shift(0);
    }

    action set_last_hop() {
        meta.last_hop = 1;
    }

    /// Ports whose next hop is the destination host.
    table last_hop {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_last_hop;
            NoAction;
        }
        size = 512;
        default_action = NoAction();
    }

    /// Outer headers of the report: this switch's MAC and IP, the
    /// collector's MAC and IP, and the UDP port (source and destination).
    action set_report(bit<48> src_mac, bit<48> dst_mac, bit<32> src_ip,
                      bit<32> dst_ip, bit<16> udp_port) {
        hdr.ethernet.srcAddr = src_mac;
        hdr.ethernet.dstAddr = dst_mac;
        hdr.rep_ipv4.srcAddr = src_ip;
        hdr.rep_ipv4.dstAddr = dst_ip;
        hdr.rep_udp.srcPort = udp_port;
        hdr.rep_udp.dstPort = udp_port;
    }

    table report_config {
        key = { }
        actions = {
            set_report;
        }
        default_action = set_report(0, 0, 0, 0, 32766);
    }

    apply {
        int_config.apply();
        if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            // The report: outer Ethernet/IPv4/UDP, report header, the saved
            // items, then the restored IPv4 header and the L4 ports.
            hdr.rep_ipv4.setValid();
            hdr.rep_udp.setValid();
            hdr.report.setValid();
            report_config.apply();
            hdr.ethernet.etherType = ETHERTYPE_IPV4;
            bit<16> item_bytes = ((bit<16>)meta.rep_count) << 5;
            bit<16> udp_len = 8 + REPORT_HDR_BYTES + item_bytes + 20 + 4;
            hdr.rep_ipv4.version = 4;
            hdr.rep_ipv4.ihl = 5;
            hdr.rep_ipv4.diffserv = 0;
            hdr.rep_ipv4.totalLen = 20 + udp_len;
            hdr.rep_ipv4.identification = 0;
            hdr.rep_ipv4.flags = 0;
            hdr.rep_ipv4.fragOffset = 0;
            hdr.rep_ipv4.ttl = REPORT_TTL;
            hdr.rep_ipv4.protocol = IPPROTO_UDP;
            hdr.rep_udp.length = udp_len;
            hdr.rep_udp.checksum = 0;
            hdr.report.version = REPORT_VERSION;
            hdr.report.flags = meta.rep_flags;
            hdr.report.int_num = meta.rep_int_num;
            hdr.report.item_count = meta.rep_count;
            hdr.report.max_hop = meta.max_hop;
            hdr.report.switch_id = meta.switch_id;
            if (meta.rep_count > 0) {
                hdr.rep_items[0].setValid();
                hdr.rep_items[0].data = meta.rep_item0;
            }
            if (meta.rep_count > 1) {
                hdr.rep_items[1].setValid();
                hdr.rep_items[1].data = meta.rep_item1;
            }
            if (meta.rep_count > 2) {
                hdr.rep_items[2].setValid();
                hdr.rep_items[2].data = meta.rep_item2;
            }
            if (meta.rep_count > 3) {
                hdr.rep_items[3].setValid();
                hdr.rep_items[3].data = meta.rep_item3;
            }
            if (meta.rep_count > 4) {
                hdr.rep_items[4].setValid();
                hdr.rep_items[4].data = meta.rep_item4;
            }
            if (meta.rep_count > 5) {
                hdr.rep_items[5].setValid();
                hdr.rep_items[5].data = meta.rep_item5;
            }
            if (meta.rep_count > 6) {
                hdr.rep_items[6].setValid();
                hdr.rep_items[6].data = meta.rep_item6;
            }
            if (meta.rep_count > 7) {
                hdr.rep_items[7].setValid();
                hdr.rep_items[7].data = meta.rep_item7;
            }
            if (!hdr.l4.isValid()) {
                hdr.l4.setValid();
                hdr.l4.srcPort = 0;
                hdr.l4.dstPort = 0;
            }
            // Drop the user payload: the report ends after the L4 ports.
            truncate(14 + 20 + (bit<32>)udp_len);
        } else if (hdr.ipv4.isValid()) {
            port_shift.apply();
            last_hop.apply();

            bit<32> port = (bit<32>)standard_metadata.egress_port;
            bit<48> ct = standard_metadata.egress_global_timestamp;
            bit<48> lt;
            bit<1> labeled_before;
            last_label_time.read(lt, port);
            has_labeled.read(labeled_before, port);
            bit<48> elapsed = ct - lt;
            // Pro: the interval (and the rest time with it) is T / 2^S.
            bit<48> t = meta.interval >> meta.shift;
            bit<48> t1 = meta.rest >> meta.shift;

            bit<8> n = 0;
            if (hdr.int_option.isValid()) {
                n = hdr.int_option.int_num;
            }
            // A specific flow: marked here, or INT_num above MAX_hop.
            bool specific = meta.specific == 1 || n > meta.max_hop;

            bool label = false;
            if (hdr.ipv4.ihl != 5 || hdr.int_items[INT_MAX_ITEMS - 1].isValid()) {
                label = false;  // no room for INT
            } else if (meta.shift >= LABEL_ALL_SHIFT || specific
                       || labeled_before == 0 || elapsed > t) {
                label = true;
            } else if (meta.mode == MODE_BASE_B && elapsed >= t1) {
                // Base B: label with probability f(INT_num); a uniform draw
                // r in [0, 2^16) labels when r / 2^16 < f.
                if (meta.f == F1) {
                    label = n > 0;
                } else {
                    bit<16> r;
                    random(r, (bit<16>)0, (bit<16>)0xFFFF);
                    if (meta.f == F2) {
                        label = (bit<32>)r * (bit<32>)(meta.max_hop - 1)
                                < ((bit<32>)n << 16);
                    } else if (meta.f == F3) {
                        label = (bit<96>)r * (bit<96>)(meta.max_hop - 1) * (bit<96>)t
                                < ((bit<96>)n << 16) * (bit<96>)elapsed;
                    }
                }
            }

            if (label) {
                bit<8> item_flags = 0;
                if (!hdr.int_option.isValid()) {
                    // First label: INT OPTION after IPv4, protocol saved.
                    hdr.int_option.setValid();
                    hdr.int_option.nh = hdr.ipv4.protocol;
                    hdr.int_option.int_num = 0;
                    hdr.ipv4.protocol = IPPROTO_INT;
                    hdr.ipv4.totalLen = hdr.ipv4.totalLen + INT_OPTION_BYTES;
                    item_flags = ITEM_FLAG_BOTTOM;
                }
                if (meta.specific == 1 && hdr.int_option.int_num <= meta.max_hop) {
                    // Section 3.3: a specific flow counts from MAX_hop.
                    hdr.int_option.int_num = hdr.int_option.int_num + meta.max_hop;
                }
                hdr.int_items.push_front(1);
                hdr.int_items[0].setValid();
                hdr.int_items[0].switch_id = meta.switch_id;
                hdr.int_items[0].ingress_port = (bit<16>)standard_metadata.ingress_port;
                hdr.int_items[0].egress_port = (bit<16>)standard_metadata.egress_port;
                hdr.int_items[0].ingress_ts = standard_metadata.ingress_global_timestamp;
                hdr.int_items[0].label_ts = ct;
                hdr.int_items[0].hop_latency = standard_metadata.deq_timedelta;
                hdr.int_items[0].flags = item_flags;
                hdr.int_items[0].enq_qdepth = (bit<24>)standard_metadata.enq_qdepth;
                hdr.int_items[0].reserved = 0;
                hdr.int_items[0].deq_qdepth = (bit<24>)standard_metadata.deq_qdepth;
                hdr.int_option.int_num = hdr.int_option.int_num + 1;
                hdr.ipv4.totalLen = hdr.ipv4.totalLen + INT_ITEM_BYTES;
                meta.item_count = meta.item_count + 1;
                last_label_time.write(port, ct);
                has_labeled.write(port, 1);
            }

            if (meta.last_hop == 1 && hdr.int_option.isValid()) {
                // Sink: keep the items for the report clone, which BMv2
                // takes of the headers as they are at the end of this
                // egress, after the restoration below.
                meta.rep_int_num = hdr.int_option.int_num;
                meta.rep_count = meta.item_count;
                meta.rep_flags = 0;
                if (hdr.int_option.int_num > meta.max_hop) {
                    meta.rep_flags = REPORT_FLAG_SPECIFIC;
                }
                meta.rep_item0 = pack_item(hdr.int_items[0]);
                meta.rep_item1 = pack_item(hdr.int_items[1]);
                meta.rep_item2 = pack_item(hdr.int_items[2]);
                meta.rep_item3 = pack_item(hdr.int_items[3]);
                meta.rep_item4 = pack_item(hdr.int_items[4]);
                meta.rep_item5 = pack_item(hdr.int_items[5]);
                meta.rep_item6 = pack_item(hdr.int_items[6]);
                meta.rep_item7 = pack_item(hdr.int_items[7]);
                clone_preserving_field_list(CloneType.E2E, REPORT_SESSION,
                                            REPORT_FIELD_LIST);
                // The host gets the packet as it was sent.
                hdr.ipv4.protocol = hdr.int_option.nh;
                hdr.ipv4.totalLen = hdr.ipv4.totalLen - INT_OPTION_BYTES
                                    - ((bit<16>)meta.item_count << 5);
                hdr.int_option.setInvalid();
                hdr.int_items[0].setInvalid();
                hdr.int_items[1].setInvalid();
                hdr.int_items[2].setInvalid();
                hdr.int_items[3].setInvalid();
                hdr.int_items[4].setInvalid();
                hdr.int_items[5].setInvalid();
                hdr.int_items[6].setInvalid();
                hdr.int_items[7].setInvalid();
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
              hdr.ipv4.diffserv,
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
              hdr.rep_ipv4.diffserv,
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
        packet.emit(hdr.ethernet);
        packet.emit(hdr.rep_ipv4);
        packet.emit(hdr.rep_udp);
        packet.emit(hdr.report);
        packet.emit(hdr.rep_items);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.int_option);
        packet.emit(hdr.int_items);
        packet.emit(hdr.l4);
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
