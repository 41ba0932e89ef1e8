/*
 * gpint: the data plane of GPINT with SQR recovery for v1model (BMv2
 * simple_switch).
 *
 * Simsek, Ergenc, Onur, "Reliable and Distributed Network Monitoring via
 * In-band Network Telemetry", sections III-B, III-C and IV. The monitor sends
 * source-routed probes; every switch of a probe's path appends its
 * measurements and passes the probe on; the last one hands it to the monitor.
 * With recovery on, a switch acknowledges each probe to the previous hop
 * (feedback) and keeps a copy of each probe it forwards until the next hop
 * acknowledges it, else sends the copy to the monitor (recovery notice).
 * Formats and the mechanisms in detail: docs/gpint_format.md.
 *
 * Packets (IPv4 protocol GPINT_PROTO, IHL 5, unfragmented; DSCP = kind):
 * - 0x17 probe: parsed into Req META, SR stack (entry 0 = this switch's),
 *   DLV list and values. First pass: loop check, feedback, then the
 *   measurement loop below. Out of entry 0's next_port, or of the monitor
 *   port when entry 0 is the last one. TTL and MACs are not changed.
 * - 0x19 feedback: releases the stored copy it acknowledges; consumed.
 * - 0x21 notice arriving from a port: dropped (notices are for the monitor).
 * - anything else: user traffic, forwarded as l3_forward.p4 does and
 *   counted by the telemetry registers.
 *
 * Measurement loop: the first ingress pass puts the MEA range of entry 0 in
 * preserved metadata (@field_list(GPINT_FL)); each egress pass appends up
 * to MEA_PER_PASS values and recirculates while some are left; the last
 * pass appends the DLV entry, pops entry 0 and the probe leaves by the port
 * ingress chose. ceil(count / MEA_PER_PASS) passes, at least 1, at most 32.
 *
 * Loop check: MyIngress.seen_request[request_id] holds the session (the
 * probe's IPv4 identification) in which this switch last measured that
 * request. A probe seen in its own session again skips measurement,
 * feedback and copy: its entry is popped and it is forwarded.
 *
 * Copy store (SQR as on BMv2): GPINT_COPY_SLOTS register slots, 4 candidate
 * slots per request id, (request_id + w) mod GPINT_COPY_SLOTS for w < 4. The
 * last egress pass of a probe forwarded to a next hop takes a free slot and
 * makes an egress-to-egress clone, the copy, which circulates through
 * recirculation: each ingress pass drops it when its slot was released by
 * the next hop's feedback, sends it to the monitor port as a 0x21 notice
 * when it has waited more than t_f, else sends it round again.
 *
 * Control-plane contract (P4Info names):
 *
 * | table | key | actions (default) |
 * | --- | --- | --- |
 * | MyIngress.ipv4_lpm (1024) | hdr.ipv4.dstAddr lpm | MyIngress.ipv4_forward(bit<48> dstAddr, bit<9> port), MyIngress.set_ecmp(bit<16> group, bit<16> count), MyIngress.drop() (default) |
 * | MyIngress.ecmp_nhop (4096) | meta.ecmp_group, meta.ecmp_select exact | MyIngress.ipv4_forward, MyIngress.drop() (default) |
 * | MyIngress.gpint_config | none | MyIngress.set_config(bit<8> switch_id, bit<9> monitor_port, bit<1> recovery, bit<48> t_f_us) (default set_config(0, 0, 0, 1500000)) |
 *
 * Clone sessions: GPINT_SESSION_BASE + p must send to port p for every port
 * p that receives probes (the feedback leaves by the probe's ingress port)
 * or sends them to a next hop (the copy's clone). Without them there is no
 * feedback, and a copy is lost (its slot is taken over once overdue).
 *
 * Registers (top level unless named MyIngress.*):
 * - rule_hits[512] (bit<32>): user packets forwarded by ipv4_forward, by the
 *   rule's egress port (the rule id; see docs/gpint_format.md);
 * - port_packets[512] (bit<32>): user frames received, by ingress port;
 * - MyIngress.seen_request[32768] (bit<17>): 1 ++ session of the last
 *   measurement of each request id;
 * - copy_slot[GPINT_COPY_SLOTS] (bit<32>): busy (bit 26), released (25),
 *   port the probe left by (24..16), Req META (15..0);
 *   copy_sent_us[...] (bit<48>), copy_gen[...] (bit<16>);
 * - copy_store_occupancy[1] (bit<32>): slots in use.
 * Counter gpint_events[16] (packets), indices EV_* below, readable over
 * P4Runtime on BMv2 too (occupancy = kept - released - timeout - reclaimed).
 */

#include <core.p4>
#include <v1model.p4>
#include "include/gpint_headers.p4"

/// First clone session of the per-port sessions (session = base + port).
#ifndef GPINT_SESSION_BASE
#define GPINT_SESSION_BASE 100
#endif
/// Copy store size; a power of two, at least 4.
#ifndef GPINT_COPY_SLOTS
#define GPINT_COPY_SLOTS 64
#endif

const bit<32> SESSION_BASE = GPINT_SESSION_BASE;
const bit<32> COPY_SLOT_MASK = GPINT_COPY_SLOTS - 1;

/// Field list preserved by the measurement loop's recirculations and by
/// the copy's clone and recirculations. A macro: p4c wants a literal in
/// the @field_list annotation.
#define GPINT_FL 1

/// Values appended per egress pass.
#define MEA_PER_PASS 4

/// A busy slot whose copy should have left the loop long ago (lost on a
/// full recirculation path, say) is taken over when it is older than
/// 2 t_f + RECLAIM_SLACK_US; its copy, if it shows up, is dropped.
const bit<48> RECLAIM_SLACK_US = 1000;

/// standard_metadata.instance_type (BMv2 simple_switch PktInstanceType).
const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE = 2;
const bit<32> INSTANCE_RECIRC = 4;

/// meta.gp_kind, set by the parser.
const bit<2> KIND_NONE = 0;
const bit<2> KIND_PROBE = 1;
const bit<2> KIND_FEEDBACK = 2;
const bit<2> KIND_NOTICE = 3;

/// meta.copy_state: what a copy is doing.
const bit<2> COPY_NONE = 0;
const bit<2> COPY_CIRCULATING = 1;
const bit<2> COPY_NOTICE = 2;

/// copy_slot layout.
const bit<32> SLOT_BUSY = 0x04000000;
const bit<32> SLOT_RELEASED = 0x02000000;

/// gpint_events indices.
const bit<32> EV_PROBE = 0;          // probes measured (first passes)
const bit<32> EV_LOOP = 1;           // probes seen before: passed on
const bit<32> EV_PROBE_ERROR = 2;    // probes dropped: parser error, no SR entry
const bit<32> EV_FEEDBACK_SENT = 3;  // feedback clones made
const bit<32> EV_FEEDBACK_MATCH = 4; // feedback that released a copy
const bit<32> EV_FEEDBACK_OTHER = 5; // feedback that matched no copy
const bit<32> EV_COPY_KEPT = 6;      // copies stored
const bit<32> EV_COPY_NO_SLOT = 7;   // probes forwarded without a copy: no free slot
const bit<32> EV_COPY_RELEASED = 8;  // copies dropped after their feedback
const bit<32> EV_COPY_TIMEOUT = 9;   // copies sent to the monitor as notices
const bit<32> EV_COPY_RECLAIMED = 10;// slots taken over from a lost copy
const bit<32> EV_COPY_STALE = 11;    // copies dropped: their slot was taken over
const bit<32> EV_COPY_PASS = 12;     // ingress passes of circulating copies
const bit<32> EV_LOOP_PASS = 13;     // recirculations of the measurement loop
const bit<32> EV_COUNT = 16;

struct headers_t {
    ethernet_t      ethernet;
    ipv4_t          ipv4;
    gpint_req_t     req;
    gpint_count_t   sr_count;
    gpint_sr_t      sr_top;                      // entry 0: this switch's
    gpint_sr_t[GPINT_MAX_SR - 1] sr;             // entries 1 ..
    gpint_count_t   dlv_count;
    gpint_dlv_t[GPINT_MAX_DLV] dlv;
    gpint_dlv_t     dlv_new;                     // this switch's, last pass
    gpint_count_t   mea_total;
    gpint_mea_t[GPINT_MAX_MEA] mea;
    gpint_mea_t[MEA_PER_PASS] mea_new;           // appended by this pass
    l4_ports_t      l4;
}

struct metadata_t {
    // Forwarding (l3_forward.p4).
    bit<16> ecmp_group;
    bit<16> ecmp_select;
    // Parser.
    bit<2>  gp_kind;
    bit<16> sr_left;
    bit<16> dlv_left;
    bit<16> mea_left_parse;
    // MyIngress.gpint_config, applied on every ingress pass.
    bit<8>  switch_id;
    bit<9>  monitor_port;
    bit<1>  recovery;
    bit<48> t_f_us;
    // Measurement loop, kept across its recirculations.
    @field_list(GPINT_FL)
    bit<1>  loop_active;
    @field_list(GPINT_FL)
    bit<9>  out_port;
    @field_list(GPINT_FL)
    bit<16> mea_next;       // next register index
    @field_list(GPINT_FL)
    bit<16> mea_left;       // values still to append
    @field_list(GPINT_FL)
    bit<16> mea_inserted;   // values appended so far
    @field_list(GPINT_FL)
    bit<1>  dlv_room;       // the DLV list has room for this switch's entry
    @field_list(GPINT_FL)
    bit<1>  keep_copy;      // store a copy when the probe leaves
    // Copy store, kept by the copy's clone and recirculations.
    @field_list(GPINT_FL)
    bit<2>  copy_state;
    @field_list(GPINT_FL)
    bit<32> copy_slot;
    @field_list(GPINT_FL)
    bit<16> copy_gen;
    @field_list(GPINT_FL)
    bit<9>  copy_port;
}

/// Telemetry the probes read; user traffic updates them.
register<bit<32>>(512) rule_hits;
register<bit<32>>(512) port_packets;
/// The copy store, shared by egress (which fills a slot) and ingress
/// (feedback releases it, the copy's pass frees it).
register<bit<32>>(GPINT_COPY_SLOTS) copy_slot;
register<bit<48>>(GPINT_COPY_SLOTS) copy_sent_us;
register<bit<16>>(GPINT_COPY_SLOTS) copy_gen;
register<bit<32>>(1) copy_store_occupancy;
counter(EV_COUNT, CounterType.packets) gpint_events;

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
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol,
                          hdr.ipv4.dscp) {
            (5, 0, IPPROTO_GPINT, DSCP_PROBE): parse_probe;
            (5, 0, IPPROTO_GPINT, DSCP_FEEDBACK): parse_feedback;
            (5, 0, IPPROTO_GPINT, DSCP_NOTICE): parse_notice;
            (5, 0, IPPROTO_TCP, _): parse_l4;
            (5, 0, IPPROTO_UDP, _): parse_l4;
            default: accept;
        }
    }

    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }

    state parse_feedback {
        meta.gp_kind = KIND_FEEDBACK;
        packet.extract(hdr.req);
        transition accept;
    }

    state parse_notice {
        meta.gp_kind = KIND_NOTICE;
        packet.extract(hdr.req);
        transition accept;
    }

    state parse_probe {
        meta.gp_kind = KIND_PROBE;
        packet.extract(hdr.req);
        packet.extract(hdr.sr_count);
        transition select(hdr.sr_count.count) {
            0: parse_dlv_count;
            default: parse_sr_top;
        }
    }

    state parse_sr_top {
        packet.extract(hdr.sr_top);
        meta.sr_left = hdr.sr_count.count - 1;
        transition select(meta.sr_left) {
            0: parse_dlv_count;
            default: parse_sr;
        }
    }

    // More than GPINT_MAX_SR entries: StackOutOfBounds, and the probe is
    // dropped in ingress. Likewise for the other two lists.
    state parse_sr {
        packet.extract(hdr.sr.next);
        meta.sr_left = meta.sr_left - 1;
        transition select(meta.sr_left) {
            0: parse_dlv_count;
            default: parse_sr;
        }
    }

    state parse_dlv_count {
        packet.extract(hdr.dlv_count);
        meta.dlv_left = hdr.dlv_count.count;
        transition select(meta.dlv_left) {
            0: parse_mea_total;
            default: parse_dlv;
        }
    }

    state parse_dlv {
        packet.extract(hdr.dlv.next);
        meta.dlv_left = meta.dlv_left - 1;
        transition select(meta.dlv_left) {
            0: parse_mea_total;
            default: parse_dlv;
        }
    }

    state parse_mea_total {
        packet.extract(hdr.mea_total);
        meta.mea_left_parse = hdr.mea_total.count;
        transition select(meta.mea_left_parse) {
            0: accept;
            default: parse_mea;
        }
    }

    state parse_mea {
        packet.extract(hdr.mea.next);
        meta.mea_left_parse = meta.mea_left_parse - 1;
        transition select(meta.mea_left_parse) {
            0: accept;
            default: parse_mea;
        }
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

control MyIngress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    /// 1 ++ session of the last measurement, by request id.
    register<bit<17>>(32768) seen_request;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /// Next hop reached: rewrite the MACs and leave by `port`. The hit is
    /// counted under the rule's egress port.
    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        bit<32> hits;
        rule_hits.read(hits, (bit<32>)port);
        rule_hits.write((bit<32>)port, hits + 1);
    }

    /// Several equal-cost next hops: pick one of `count` members of
    /// `group` by a CRC-16 of the 5-tuple, so a flow keeps its path.
    action set_ecmp(bit<16> group, bit<16> count) {
        meta.ecmp_group = group;
        hash(meta.ecmp_select, HashAlgorithm.crc16, (bit<16>) 0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
               hdr.l4.srcPort, hdr.l4.dstPort },
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

    /// Per switch: its id in DLV entries, the port toward the monitor,
    /// recovery (SQR) on or off, and the feedback timeout t_f.
    action set_config(bit<8> switch_id, bit<9> monitor_port, bit<1> recovery,
                      bit<48> t_f_us) {
        meta.switch_id = switch_id;
        meta.monitor_port = monitor_port;
        meta.recovery = recovery;
        meta.t_f_us = t_f_us;
    }

    table gpint_config {
        actions = {
            set_config;
        }
        default_action = set_config(0, 0, 0, 1500000);
    }

    action free_slot(bit<32> slot) {
        copy_slot.write(slot, 0);
        bit<32> used;
        copy_store_occupancy.read(used, 0);
        copy_store_occupancy.write(0, used - 1);
    }

    /// User traffic: count the frame by its port, then l3_forward.p4.
    action count_port() {
        bit<32> n;
        port_packets.read(n, (bit<32>)standard_metadata.ingress_port);
        port_packets.write((bit<32>)standard_metadata.ingress_port, n + 1);
    }

    apply {
        gpint_config.apply();
        bool recirculated = standard_metadata.instance_type == INSTANCE_RECIRC;

        if (recirculated && meta.copy_state == COPY_CIRCULATING) {
            // A stored copy's pass: released -> gone; waited more than t_f
            // -> notice to the monitor; else round again.
            gpint_events.count(EV_COPY_PASS);
            bit<32> slot_state;
            bit<16> gen;
            bit<48> sent;
            copy_slot.read(slot_state, meta.copy_slot);
            copy_gen.read(gen, meta.copy_slot);
            copy_sent_us.read(sent, meta.copy_slot);
            if ((slot_state & SLOT_BUSY) == 0 || gen != meta.copy_gen) {
                gpint_events.count(EV_COPY_STALE);
                drop();
            } else if ((slot_state & SLOT_RELEASED) != 0) {
                gpint_events.count(EV_COPY_RELEASED);
                free_slot(meta.copy_slot);
                drop();
            } else if (standard_metadata.ingress_global_timestamp - sent > meta.t_f_us) {
                gpint_events.count(EV_COPY_TIMEOUT);
                free_slot(meta.copy_slot);
                hdr.ipv4.dscp = DSCP_NOTICE;
                meta.copy_state = COPY_NOTICE;
                standard_metadata.egress_spec = meta.monitor_port;
            } else {
                standard_metadata.egress_spec = meta.copy_port;
            }
        } else if (recirculated && meta.loop_active == 1) {
            // The measurement loop goes on; egress appends the next values.
            gpint_events.count(EV_LOOP_PASS);
            standard_metadata.egress_spec = meta.out_port;
        } else if (meta.gp_kind == KIND_NONE) {
            if (standard_metadata.instance_type == INSTANCE_NORMAL) {
                count_port();
            }
            if (hdr.ipv4.isValid()) {
                // RFC 1812 5.3.1: a packet whose TTL would reach 0 is not
                // forwarded (TTL 0 on arrival included).
                if (hdr.ipv4.ttl <= 1) {
                    drop();
                } else {
                    switch (ipv4_lpm.apply().action_run) {
                        set_ecmp: { ecmp_nhop.apply(); }
                    }
                }
            } else {
                drop();
            }
        } else if (meta.gp_kind == KIND_FEEDBACK) {
            // Release the copy this feedback acknowledges: a busy,
            // unreleased slot among the request's four candidates that holds
            // the same Req META and was sent out of the port the feedback
            // came in by.
            bit<32> want = SLOT_BUSY
                | ((bit<32>)standard_metadata.ingress_port << 16)
                | (bit<32>)(hdr.req.request_id ++ hdr.req.request_type);
            bit<32> base = (bit<32>)hdr.req.request_id;
            bit<32> s0 = base & COPY_SLOT_MASK;
            bit<32> s1 = (base + 1) & COPY_SLOT_MASK;
            bit<32> s2 = (base + 2) & COPY_SLOT_MASK;
            bit<32> s3 = (base + 3) & COPY_SLOT_MASK;
            bit<32> v0;
            bit<32> v1;
            bit<32> v2;
            bit<32> v3;
            copy_slot.read(v0, s0);
            copy_slot.read(v1, s1);
            copy_slot.read(v2, s2);
            copy_slot.read(v3, s3);
            if (standard_metadata.parser_error != error.NoError) {
                gpint_events.count(EV_FEEDBACK_OTHER);
            } else if (v0 == want) {
                copy_slot.write(s0, v0 | SLOT_RELEASED);
                gpint_events.count(EV_FEEDBACK_MATCH);
            } else if (v1 == want) {
                copy_slot.write(s1, v1 | SLOT_RELEASED);
                gpint_events.count(EV_FEEDBACK_MATCH);
            } else if (v2 == want) {
                copy_slot.write(s2, v2 | SLOT_RELEASED);
                gpint_events.count(EV_FEEDBACK_MATCH);
            } else if (v3 == want) {
                copy_slot.write(s3, v3 | SLOT_RELEASED);
                gpint_events.count(EV_FEEDBACK_MATCH);
            } else {
                gpint_events.count(EV_FEEDBACK_OTHER);
            }
            drop();
        } else if (meta.gp_kind == KIND_NOTICE) {
            drop();
        } else if (standard_metadata.parser_error != error.NoError
                   || hdr.sr_count.count == 0) {
            // A probe cut short, over a limit, or without this switch's
            // entry.
            gpint_events.count(EV_PROBE_ERROR);
            drop();
        } else {
            // A probe's first pass.
            bool last = hdr.sr_count.count == 1;
            if (last) {
                meta.out_port = meta.monitor_port;
            } else {
                meta.out_port = (bit<9>)hdr.sr_top.next_port;
            }
            standard_metadata.egress_spec = meta.out_port;
            bit<17> session = 1w1 ++ hdr.ipv4.identification;
            bit<17> seen;
            seen_request.read(seen, (bit<32>)hdr.req.request_id);
            if (seen == session) {
                // Measured here in this session already: pass it on.
                gpint_events.count(EV_LOOP);
                hdr.sr_top.setInvalid();
                hdr.sr_count.count = hdr.sr_count.count - 1;
                hdr.ipv4.totalLen = hdr.ipv4.totalLen - SR_ENTRY_BYTES;
            } else {
                gpint_events.count(EV_PROBE);
                seen_request.write((bit<32>)hdr.req.request_id, session);
                if (meta.recovery == 1) {
                    // Egress turns the clone (instance type 1) into the
                    // feedback.
                    clone(CloneType.I2E,
                          SESSION_BASE + (bit<32>)standard_metadata.ingress_port);
                    gpint_events.count(EV_FEEDBACK_SENT);
                }
                meta.loop_active = 1;
                meta.mea_next = (bit<16>)hdr.sr_top.mea_start;
                meta.mea_inserted = 0;
                if (hdr.dlv_count.count >= GPINT_MAX_DLV) {
                    meta.dlv_room = 0;
                    meta.mea_left = 0;
                } else {
                    meta.dlv_room = 1;
                    bit<16> room = GPINT_MAX_MEA - hdr.mea_total.count;
                    meta.mea_left = (bit<16>)hdr.sr_top.mea_count;
                    if (meta.mea_left > room) {
                        meta.mea_left = room;
                    }
                }
                if (meta.recovery == 1 && !last) {
                    meta.keep_copy = 1;
                }
            }
        }
    }
}

/// The copy store's insertion, at the last egress pass of a probe that
/// leaves for a next hop with recovery on: the first free slot among the
/// request's four candidates, else the first one whose copy is long
/// overdue (taken over), else no copy. The copy is an egress-to-egress
/// clone of the probe as it leaves, by the session of its egress port.
control StoreCopy(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<48> now = standard_metadata.egress_global_timestamp;
        bit<48> overdue = meta.t_f_us + meta.t_f_us + RECLAIM_SLACK_US;
        bit<32> base = (bit<32>)hdr.req.request_id;
        bit<32> s0 = base & COPY_SLOT_MASK;
        bit<32> s1 = (base + 1) & COPY_SLOT_MASK;
        bit<32> s2 = (base + 2) & COPY_SLOT_MASK;
        bit<32> s3 = (base + 3) & COPY_SLOT_MASK;
        bit<32> v0;
        bit<32> v1;
        bit<32> v2;
        bit<32> v3;
        bit<48> t0;
        bit<48> t1;
        bit<48> t2;
        bit<48> t3;
        copy_slot.read(v0, s0);
        copy_slot.read(v1, s1);
        copy_slot.read(v2, s2);
        copy_slot.read(v3, s3);
        copy_sent_us.read(t0, s0);
        copy_sent_us.read(t1, s1);
        copy_sent_us.read(t2, s2);
        copy_sent_us.read(t3, s3);
        bit<1> found = 1;
        bit<1> taken_over = 0;
        bit<32> slot = s0;
        if ((v0 & SLOT_BUSY) == 0) {
            slot = s0;
        } else if ((v1 & SLOT_BUSY) == 0) {
            slot = s1;
        } else if ((v2 & SLOT_BUSY) == 0) {
            slot = s2;
        } else if ((v3 & SLOT_BUSY) == 0) {
            slot = s3;
        } else {
            taken_over = 1;
            if (now - t0 > overdue) {
                slot = s0;
            } else if (now - t1 > overdue) {
                slot = s1;
            } else if (now - t2 > overdue) {
                slot = s2;
            } else if (now - t3 > overdue) {
                slot = s3;
            } else {
                found = 0;
            }
        }
        if (found == 0) {
            gpint_events.count(EV_COPY_NO_SLOT);
        } else {
            if (taken_over == 1) {
                gpint_events.count(EV_COPY_RECLAIMED);
            } else {
                bit<32> used;
                copy_store_occupancy.read(used, 0);
                copy_store_occupancy.write(0, used + 1);
            }
            gpint_events.count(EV_COPY_KEPT);
            bit<16> gen;
            copy_gen.read(gen, slot);
            gen = gen + 1;
            copy_gen.write(slot, gen);
            copy_slot.write(slot, SLOT_BUSY
                | ((bit<32>)standard_metadata.egress_port << 16)
                | (bit<32>)(hdr.req.request_id ++ hdr.req.request_type));
            copy_sent_us.write(slot, now);
            meta.copy_state = COPY_CIRCULATING;
            meta.copy_slot = slot;
            meta.copy_gen = gen;
            meta.copy_port = standard_metadata.egress_port;
            clone_preserving_field_list(CloneType.E2E,
                SESSION_BASE + (bit<32>)standard_metadata.egress_port, GPINT_FL);
        }
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    /// Appends the next value of the requested counters.
    action append_value(out bit<32> value) {
        bit<32> hits;
        bit<32> packets;
        rule_hits.read(hits, (bit<32>)meta.mea_next);
        port_packets.read(packets, (bit<32>)meta.mea_next);
        value = (hdr.req.request_type == REQ_RULE_HITS) ? hits : packets;
        meta.mea_next = meta.mea_next + 1;
        meta.mea_left = meta.mea_left - 1;
        meta.mea_inserted = meta.mea_inserted + 1;
        hdr.mea_total.count = hdr.mea_total.count + 1;
        hdr.ipv4.totalLen = hdr.ipv4.totalLen + MEA_VALUE_BYTES;
    }

    StoreCopy() store_copy;

    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE) {
            // The feedback: the probe cut after Req META.
            hdr.ipv4.dscp = DSCP_FEEDBACK;
            hdr.ipv4.totalLen = IPV4_BYTES + REQ_BYTES;
            truncate(36);  // Ethernet 14 + IPv4 20 + Req META 2
        } else if (meta.copy_state == COPY_CIRCULATING) {
            // The copy right after its clone, or between two checks.
            recirculate_preserving_field_list(GPINT_FL);
        } else if (meta.copy_state == COPY_NOTICE) {
            // A notice on its way to the monitor.
        } else if (meta.loop_active == 1) {
            if (meta.mea_left > 0) {
                hdr.mea_new[0].setValid();
                append_value(hdr.mea_new[0].value);
            }
            if (meta.mea_left > 0) {
                hdr.mea_new[1].setValid();
                append_value(hdr.mea_new[1].value);
            }
            if (meta.mea_left > 0) {
                hdr.mea_new[2].setValid();
                append_value(hdr.mea_new[2].value);
            }
            if (meta.mea_left > 0) {
                hdr.mea_new[3].setValid();
                append_value(hdr.mea_new[3].value);
            }
            if (meta.mea_left > 0) {
                recirculate_preserving_field_list(GPINT_FL);
            } else {
                // Last pass: this switch's DLV entry, pop entry 0, leave.
                meta.loop_active = 0;
                if (meta.dlv_room == 1) {
                    hdr.dlv_new.setValid();
                    hdr.dlv_new.switch_id = meta.switch_id;
                    if (standard_metadata.deq_qdepth > 255) {
                        hdr.dlv_new.qdepth = 255;
                    } else {
                        hdr.dlv_new.qdepth = (bit<8>)standard_metadata.deq_qdepth;
                    }
                    hdr.dlv_new.mea_count = meta.mea_inserted;
                    hdr.dlv_count.count = hdr.dlv_count.count + 1;
                    hdr.ipv4.totalLen = hdr.ipv4.totalLen + DLV_ENTRY_BYTES;
                }
                hdr.sr_top.setInvalid();
                hdr.sr_count.count = hdr.sr_count.count - 1;
                hdr.ipv4.totalLen = hdr.ipv4.totalLen - SR_ENTRY_BYTES;
                if (meta.keep_copy == 1) {
                    store_copy.apply(hdr, meta, standard_metadata);
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
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.req);
        packet.emit(hdr.sr_count);
        packet.emit(hdr.sr_top);
        packet.emit(hdr.sr);
        packet.emit(hdr.dlv_count);
        packet.emit(hdr.dlv);
        packet.emit(hdr.dlv_new);
        packet.emit(hdr.mea_total);
        packet.emit(hdr.mea);
        packet.emit(hdr.mea_new);
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
