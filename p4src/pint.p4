/*
 * pint: the data plane of PINT (Ben Basat et al., "PINT: Probabilistic
 * In-band Network Telemetry", sections 3-4) for v1model (BMv2
 * simple_switch). The control plane and the inference are
 * controller/pint/; the format and the control-plane contract in detail:
 * docs/pint_format.md.
 *
 * Forwarding is l3_forward.p4's (same tables and actions, so
 * controller/routing.py installs routes unchanged; ECMP hashes the
 * original protocol, so a flow takes the same path with or without PINT).
 * On top of it, in egress, for unfragmented TCP and UDP packets (IHL 5):
 * - Source (the packet came in by a port in pint_source_port): a shim of
 *   2 bytes (the original protocol, the global bit budget) and a digest of
 *   budget / 8 bytes, zero, go between IPv4 and the L4 header; the IPv4
 *   protocol becomes PINT_PROTO and the total length grows.
 * - Every switch with the digest: the packet id is CRC-32 over IPv4
 *   source, destination, original protocol, L4 ports and identification;
 *   the hop number is init_ttl - TTL on arrival + 1. Hash words are
 *   fmix32(crc32(id [++ hop]) ^ salt). The query-selection word q picks
 *   the query set (range table); the set's path-tracing query and its
 *   per-packet maximum query write their bit fields (offset, width from
 *   table entries) as controller/pint/pathtrace.py and values.py say.
 * - Sink (the packet leaves by a port in pint_sink_port): after its own
 *   hop, the shim and digest are removed and the protocol and length put
 *   back, so the host gets the packet as sent (TTL and IPv4 checksum
 *   routed); an egress-to-egress clone (session PINT_REPORT_SESSION)
 *   becomes the report (packet id, flow, hop count, digest) to the
 *   recording module.
 *
 * Control-plane contract (P4Info names):
 *
 * | table | key | actions (default) |
 * | --- | --- | --- |
 * | MyIngress.ipv4_lpm (1024) | hdr.ipv4.dstAddr lpm | MyIngress.ipv4_forward(bit<48> dstAddr, bit<9> port), MyIngress.set_ecmp(bit<16> group, bit<16> count), MyIngress.drop() (default) |
 * | MyIngress.ecmp_nhop (4096) | meta.ecmp_group, meta.ecmp_select exact | MyIngress.ipv4_forward, MyIngress.drop() (default) |
 * | MyEgress.pint_config | none | MyEgress.set_config(bit<32> switch_id, bit<8> budget, bit<8> init_ttl, bit<32> query_salt) (default set_config(0, 16, 64, 0)) |
 * | MyEgress.pint_source_port (512) | standard_metadata.ingress_port exact | MyEgress.set_source(), NoAction (default) |
 * | MyEgress.pint_sink_port (512) | standard_metadata.egress_port exact | MyEgress.set_sink(), NoAction (default) |
 * | MyEgress.pint_query_select (64) | meta.q_word range | MyEgress.set_query_set(bit<8> set_id), NoAction (default) |
 * | MyEgress.pint_path_field (64) | meta.set_id exact | MyEgress.path_field(bit<8> offset, bit<8> width), NoAction (default) |
 * | MyEgress.pint_path_config | none | MyEgress.set_path(bit<32> scheme_salt, bit<32> fragment_salt, bit<32> hop_salt, bit<33> baseline_threshold, bit<33> xor_threshold, bit<32> fragments, bit<8> fragment_bits, bit<32> fragment_mask) |
 * | MyEgress.pint_hop_threshold (64) | meta.hop exact | MyEgress.set_hop_threshold(bit<33> threshold), NoAction (default: the hop does not write) |
 * | MyEgress.pint_max_field (64) | meta.set_id exact | MyEgress.max_field(bit<8> offset, bit<8> width), NoAction (default) |
 * | MyEgress.pint_max_config | none | MyEgress.set_max(bit<32> round_salt) |
 * | MyEgress.pint_max_level (1024) | meta.value range | MyEgress.set_level(bit<32> code, bit<32> lo, bit<32> base, bit<64> step), NoAction (default: code 0) |
 * | MyEgress.pint_report_config | none | MyEgress.set_report(bit<48> src_mac, bit<48> collector_mac), MyEgress.no_report() (default) |
 *
 * Clone session PINT_REPORT_SESSION (501) must send to the collector's port.
 * Counter pint_events[8] (packets), indices EV_* below.
 */

#include <core.p4>
#include <v1model.p4>

#define PINT_FL 1

const bit<16> ETHERTYPE_IPV4 = 0x0800;
/// The report's EtherType (IEEE 802 local experimental).
const bit<16> ETHERTYPE_PINT_REPORT = 0x88B5;
const bit<8>  IP_PROTO_TCP = 6;
const bit<8>  IP_PROTO_UDP = 17;
/// The IPv4 protocol of a packet carrying the digest (RFC 3692 experimental).
const bit<8>  PINT_PROTO = 0xFD;
const bit<32> PINT_REPORT_SESSION = 501;
const bit<32> INSTANCE_EGRESS_CLONE = 2;
const bit<32> REPORT_BYTES = 14 + 29;

const bit<32> EV_SOURCE = 0;   // digests added
const bit<32> EV_HOP = 1;      // hops that ran their query set
const bit<32> EV_PATH = 2;     // path-tracing writes
const bit<32> EV_MAX = 3;      // per-packet maximum writes that raised the field
const bit<32> EV_SINK = 4;     // digests removed
const bit<32> EV_REPORT = 5;   // reports sent
const bit<32> EV_BROKEN = 6;   // a shim with an unknown budget reached a sink: dropped
const bit<32> EV_COUNT = 8;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

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

/// Between IPv4 and L4: the protocol the sender wrote, and the budget
/// (8, 16 or 32), which says how many digest bytes follow.
header pint_shim_t {
    bit<8> nextProto;
    bit<8> budget;
}

header pint_d8_t  { bit<8>  digest; }
header pint_d16_t { bit<16> digest; }
header pint_d32_t { bit<32> digest; }

header l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

/// One sink report (29 bytes after Ethernet).
header pint_report_t {
    bit<32> packet_id;
    bit<32> srcAddr;
    bit<32> dstAddr;
    bit<8>  protocol;
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> identification;
    bit<8>  hop_count;
    bit<8>  budget;
    bit<32> digest;
    bit<32> switch_id;
}

struct headers_t {
    ethernet_t    ethernet;
    pint_report_t report;
    ipv4_t        ipv4;
    pint_shim_t   shim;
    pint_d8_t     d8;
    pint_d16_t    d16;
    pint_d32_t    d32;
    l4_ports_t    l4;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_select;
    bit<8>  proto;          // the sender's protocol
    bit<1>  source;
    bit<1>  sink;
    bit<1>  report_on;
    bit<48> rep_src_mac;
    bit<48> rep_collector_mac;
    bit<32> switch_id;
    bit<8>  budget;
    bit<8>  init_ttl;
    bit<32> query_salt;
    bit<32> q_word;
    bit<8>  set_id;
    // Path tracing.
    bit<1>  path_on;
    bit<8>  path_offset;
    bit<8>  path_width;
    bit<32> scheme_salt;
    bit<32> fragment_salt;
    bit<32> hop_salt;
    bit<33> baseline_threshold;
    bit<33> xor_threshold;
    bit<32> fragments;
    bit<8>  fragment_bits;
    bit<32> fragment_mask;
    bit<1>  hop_known;
    bit<33> hop_threshold;
    // Per-packet maximum.
    bit<1>  max_on;
    bit<8>  max_offset;
    bit<8>  max_width;
    bit<32> round_salt;
    bit<32> value;
    bit<32> code;
    bit<32> level_lo;
    bit<32> level_base;
    bit<64> level_step;
    // Kept by the report clone.
    @field_list(PINT_FL)
    bit<32> pid;
    @field_list(PINT_FL)
    bit<8>  hop;
    @field_list(PINT_FL)
    bit<32> digest;
    @field_list(PINT_FL)
    bit<8>  rep_budget;
    @field_list(PINT_FL)
    bit<32> rep_switch_id;
}

counter(EV_COUNT, CounterType.packets) pint_events;

/// MurmurHash3's 32-bit finaliser (controller/pint/hashing.py fmix32).
bit<32> fmix32(in bit<32> v) {
    bit<32> x = v;
    x = x ^ (x >> 16);
    x = x * 0x85EBCA6B;
    x = x ^ (x >> 13);
    x = x * 0xC2B2AE35;
    x = x ^ (x >> 16);
    return x;
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
        meta.proto = hdr.ipv4.protocol;
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_TCP): parse_l4;
            (5, 0, IP_PROTO_UDP): parse_l4;
            (5, 0, PINT_PROTO): parse_shim;
            default: accept;
        }
    }
    state parse_shim {
        packet.extract(hdr.shim);
        meta.proto = hdr.shim.nextProto;
        transition select(hdr.shim.budget) {
            8: parse_d8;
            16: parse_d16;
            32: parse_d32;
            default: accept;
        }
    }
    state parse_d8 {
        packet.extract(hdr.d8);
        meta.digest = (bit<32>) hdr.d8.digest;
        transition parse_inner;
    }
    state parse_d16 {
        packet.extract(hdr.d16);
        meta.digest = (bit<32>) hdr.d16.digest;
        transition parse_inner;
    }
    state parse_d32 {
        packet.extract(hdr.d32);
        meta.digest = hdr.d32.digest;
        transition parse_inner;
    }
    state parse_inner {
        transition select(hdr.shim.nextProto) {
            IP_PROTO_TCP: parse_l4;
            IP_PROTO_UDP: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
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
    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    /// ECMP over the sender's 5-tuple (the original protocol, not PINT_PROTO).
    action set_ecmp(bit<16> group, bit<16> count) {
        meta.ecmp_group = group;
        hash(meta.ecmp_select, HashAlgorithm.crc16, (bit<16>) 0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, meta.proto,
               hdr.l4.srcPort, hdr.l4.dstPort },
             count);
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { ipv4_forward; set_ecmp; drop; }
        size = 1024;
        default_action = drop();
    }
    table ecmp_nhop {
        key = {
            meta.ecmp_group: exact;
            meta.ecmp_select: exact;
        }
        actions = { ipv4_forward; drop; }
        size = 4096;
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid()) {
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
    }
}

control MyEgress(inout headers_t hdr,
                 inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    action set_config(bit<32> switch_id, bit<8> budget, bit<8> init_ttl, bit<32> query_salt) {
        meta.switch_id = switch_id;
        meta.budget = budget;
        meta.init_ttl = init_ttl;
        meta.query_salt = query_salt;
    }
    table pint_config {
        actions = { set_config; }
        default_action = set_config(0, 16, 64, 0);
    }
    action set_source() { meta.source = 1; }
    table pint_source_port {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_source; NoAction; }
        size = 512;
        default_action = NoAction();
    }
    action set_sink() { meta.sink = 1; }
    table pint_sink_port {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_sink; NoAction; }
        size = 512;
        default_action = NoAction();
    }
    action set_query_set(bit<8> set_id) { meta.set_id = set_id; }
    table pint_query_select {
        key = { meta.q_word: range; }
        actions = { set_query_set; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    action path_field(bit<8> offset, bit<8> width) {
        meta.path_on = 1;
        meta.path_offset = offset;
        meta.path_width = width;
    }
    table pint_path_field {
        key = { meta.set_id: exact; }
        actions = { path_field; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    action set_path(bit<32> scheme_salt, bit<32> fragment_salt, bit<32> hop_salt,
                    bit<33> baseline_threshold, bit<33> xor_threshold, bit<32> fragments,
                    bit<8> fragment_bits, bit<32> fragment_mask) {
        meta.scheme_salt = scheme_salt;
        meta.fragment_salt = fragment_salt;
        meta.hop_salt = hop_salt;
        meta.baseline_threshold = baseline_threshold;
        meta.xor_threshold = xor_threshold;
        meta.fragments = fragments;
        meta.fragment_bits = fragment_bits;
        meta.fragment_mask = fragment_mask;
    }
    table pint_path_config {
        actions = { set_path; }
        default_action = set_path(0, 0, 0, 0x100000000, 0, 1, 32, 0xFFFFFFFF);
    }
    action set_hop_threshold(bit<33> threshold) {
        meta.hop_known = 1;
        meta.hop_threshold = threshold;
    }
    table pint_hop_threshold {
        key = { meta.hop: exact; }
        actions = { set_hop_threshold; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    action max_field(bit<8> offset, bit<8> width) {
        meta.max_on = 1;
        meta.max_offset = offset;
        meta.max_width = width;
    }
    table pint_max_field {
        key = { meta.set_id: exact; }
        actions = { max_field; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    action set_max(bit<32> round_salt) { meta.round_salt = round_salt; }
    table pint_max_config {
        actions = { set_max; }
        default_action = set_max(0);
    }
    /// The value's lower level: its code, the first integer value of the
    /// level and the rounding threshold there (base), and the threshold's
    /// growth per unit of value in 1/2^16 (step).
    action set_level(bit<32> code, bit<32> lo, bit<32> base, bit<64> step) {
        meta.code = code;
        meta.level_lo = lo;
        meta.level_base = base;
        meta.level_step = step;
    }
    table pint_max_level {
        key = { meta.value: range; }
        actions = { set_level; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    action set_report(bit<48> src_mac, bit<48> collector_mac) {
        meta.report_on = 1;
        meta.rep_src_mac = src_mac;
        meta.rep_collector_mac = collector_mac;
    }
    action no_report() { meta.report_on = 0; }
    table pint_report_config {
        actions = { set_report; no_report; }
        default_action = no_report();
    }

    /// Replace the width-bit field at offset of the digest by field.
    action put_field(bit<8> offset, bit<8> width, bit<32> field) {
        bit<32> mask = (bit<32>) ((((bit<33>) 1) << width) - 1);
        meta.digest = (meta.digest & ~(mask << offset)) | ((field & mask) << offset);
    }

    apply {
        if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            // The report: Ethernet and the report header, nothing else.
            hdr.report.setValid();
            hdr.report.packet_id = meta.pid;
            hdr.report.srcAddr = hdr.ipv4.srcAddr;
            hdr.report.dstAddr = hdr.ipv4.dstAddr;
            hdr.report.protocol = hdr.ipv4.protocol;
            hdr.report.srcPort = hdr.l4.srcPort;
            hdr.report.dstPort = hdr.l4.dstPort;
            hdr.report.identification = hdr.ipv4.identification;
            hdr.report.hop_count = meta.hop;
            hdr.report.budget = meta.rep_budget;
            hdr.report.digest = meta.digest;
            hdr.report.switch_id = meta.rep_switch_id;
            pint_report_config.apply();
            hdr.ethernet.dstAddr = meta.rep_collector_mac;
            hdr.ethernet.srcAddr = meta.rep_src_mac;
            hdr.ethernet.etherType = ETHERTYPE_PINT_REPORT;
            hdr.ipv4.setInvalid();
            hdr.l4.setInvalid();
            truncate(REPORT_BYTES);
            pint_events.count(EV_REPORT);
            return;
        }
        if (!hdr.ipv4.isValid()) {
            return;
        }
        pint_config.apply();
        pint_source_port.apply();
        pint_sink_port.apply();
        if (hdr.shim.isValid() && !hdr.d8.isValid() && !hdr.d16.isValid()
            && !hdr.d32.isValid()) {
            // A budget this program does not know: passed on, never to a host.
            if (meta.sink == 1) {
                mark_to_drop(standard_metadata);
                pint_events.count(EV_BROKEN);
            }
            return;
        }
        if (!hdr.l4.isValid()) {
            return;
        }
        if (!hdr.shim.isValid() && meta.source == 1
            && (meta.budget == 8 || meta.budget == 16 || meta.budget == 32)) {
            hdr.shim.setValid();
            hdr.shim.nextProto = hdr.ipv4.protocol;
            hdr.shim.budget = meta.budget;
            hdr.ipv4.protocol = PINT_PROTO;
            hdr.ipv4.totalLen = hdr.ipv4.totalLen + 2 + (bit<16>) (meta.budget >> 3);
            if (meta.budget == 8) {
                hdr.d8.setValid();
            } else if (meta.budget == 16) {
                hdr.d16.setValid();
            } else {
                hdr.d32.setValid();
            }
            meta.digest = 0;
            pint_events.count(EV_SOURCE);
        }
        if (!hdr.shim.isValid()) {
            return;
        }
        // This hop: TTL on arrival is the routed TTL + 1.
        meta.hop = meta.init_ttl - hdr.ipv4.ttl;
        hash(meta.pid, HashAlgorithm.crc32, 32w0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, meta.proto, hdr.l4.srcPort,
               hdr.l4.dstPort, hdr.ipv4.identification },
             64w0x100000000);
        bit<32> id_crc;
        hash(id_crc, HashAlgorithm.crc32, 32w0, { meta.pid }, 64w0x100000000);
        meta.q_word = fmix32(id_crc ^ meta.query_salt);
        pint_query_select.apply();
        if (meta.set_id != 0) {
            pint_events.count(EV_HOP);
            pint_path_field.apply();
            pint_max_field.apply();
        }
        if (meta.path_on == 1) {
            pint_path_config.apply();
            pint_hop_threshold.apply();
            bit<32> scheme_word = fmix32(id_crc ^ meta.scheme_salt);
            bit<32> fragment = 0;
            if (meta.fragments > 1) {
                bit<64> wide = ((bit<64>) fmix32(id_crc ^ meta.fragment_salt))
                               * ((bit<64>) meta.fragments);
                fragment = (bit<32>) (wide >> 32);
            }
            bit<8> shift = (bit<8>) fragment * meta.fragment_bits;
            bit<32> value = (meta.switch_id >> shift) & meta.fragment_mask;
            bit<32> hop_crc;
            hash(hop_crc, HashAlgorithm.crc32, 32w0, { meta.pid, meta.hop }, 64w0x100000000);
            bit<33> hop_word = (bit<33>) fmix32(hop_crc ^ meta.hop_salt);
            bit<32> mask = (bit<32>) ((((bit<33>) 1) << meta.path_width) - 1);
            bit<32> field = (meta.digest >> meta.path_offset) & mask;
            bit<1> wrote = 0;
            if (((bit<33>) scheme_word) < meta.baseline_threshold) {
                if (meta.hop_known == 1 && hop_word < meta.hop_threshold) {
                    field = value;
                    wrote = 1;
                }
            } else if (meta.hop_known == 1 && hop_word < meta.xor_threshold) {
                field = field ^ value;
                wrote = 1;
            }
            if (wrote == 1) {
                put_field(meta.path_offset, meta.path_width, field);
                pint_events.count(EV_PATH);
            }
        }
        if (meta.max_on == 1 && meta.hop != 0) {
            pint_max_config.apply();
            meta.value = standard_metadata.deq_timedelta;
            pint_max_level.apply();
            bit<32> round_crc;
            hash(round_crc, HashAlgorithm.crc32, 32w0, { meta.pid, meta.hop }, 64w0x100000000);
            bit<64> coin = (bit<64>) fmix32(round_crc ^ meta.round_salt);
            bit<64> up = (bit<64>) meta.level_base
                         + ((((bit<64>) (meta.value - meta.level_lo)) * meta.level_step) >> 16);
            bit<32> code = meta.code;
            if (meta.level_step != 0 && coin < up) {
                code = code + 1;
            }
            bit<32> mask = (bit<32>) ((((bit<33>) 1) << meta.max_width) - 1);
            bit<32> field = (meta.digest >> meta.max_offset) & mask;
            if (code > field) {
                put_field(meta.max_offset, meta.max_width, code);
                pint_events.count(EV_MAX);
            }
        }
        if (meta.sink == 1) {
            // Restore the sender's packet, then report.
            hdr.ipv4.protocol = hdr.shim.nextProto;
            hdr.ipv4.totalLen = hdr.ipv4.totalLen - 2 - (bit<16>) (hdr.shim.budget >> 3);
            meta.rep_budget = hdr.shim.budget;
            meta.rep_switch_id = meta.switch_id;
            hdr.shim.setInvalid();
            hdr.d8.setInvalid();
            hdr.d16.setInvalid();
            hdr.d32.setInvalid();
            pint_events.count(EV_SINK);
            clone_preserving_field_list(CloneType.E2E, PINT_REPORT_SESSION, PINT_FL);
        } else if (hdr.d8.isValid()) {
            hdr.d8.digest = (bit<8>) meta.digest;
        } else if (hdr.d16.isValid()) {
            hdr.d16.digest = (bit<16>) meta.digest;
        } else {
            hdr.d32.digest = meta.digest;
        }
    }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.report);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.shim);
        packet.emit(hdr.d8);
        packet.emit(hdr.d16);
        packet.emit(hdr.d32);
        packet.emit(hdr.l4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
