/*
 * hula: l3_forward's IPv4 forwarding plus HULA's probes, the probing
 * baseline INT-label is compared with (INT-label figure 14).
 *
 * Katta et al., "HULA: Scalable Load Balancing Using Programmable Data
 * Planes" (SOSR 2016): every ToR originates a probe each probing interval
 * and the fabric floods it (ToR -> all aggregation switches -> the other
 * ToRs of the pod and all cores -> the aggregation switches of the other
 * pods -> their ToRs). A switch learns, per origin ToR, the least utilised
 * next hop toward it from the path utilisation the probes carry.
 *
 * - Forwarding: exactly l3_forward.p4's (MyIngress.ipv4_lpm, ecmp_nhop,
 *   ipv4_forward, set_ecmp, drop), so controller/routing.py installs routes
 *   unchanged. The HULA state is learned but forwarding stays on those
 *   routes: the baseline measures what the probes cost, not where HULA
 *   would send flowlets.
 * - Probes (ethertype ETHERTYPE_HULA): MyIngress.probe_replicate, keyed by
 *   the ingress port, picks the multicast group of the ports the probe
 *   goes on to; a miss drops it, which is how ToRs consume probes.
 * - Utilisation: a per-port estimate of the bytes sent (egress, every
 *   packet) in windows of 2^UTIL_WINDOW_SHIFT microseconds, smoothed with
 *   weight 1/2 per window. Ingress folds the estimate of the probe's arrival
 *   port into the probe (HULA's rule: traffic toward the origin leaves by
 *   that port), egress folds in the departure port's, so a probe carries the
 *   largest utilisation seen on either direction of the links it crossed.
 * - Best hop per origin ToR: replaced when a probe reports a lower path
 *   utilisation, refreshed (utilisation overwritten) by any probe that
 *   arrives through the current best hop (HULA section 3.3). No aging.
 */

#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_IPV4 = 0x0800;
/// HULA probes. Not an IEEE-assigned type: the value p4lang's HULA exercise
/// uses; any type the fabric carries no other traffic with will do.
const bit<16> ETHERTYPE_HULA = 0x2345;
const bit<8>  IP_PROTO_TCP = 6;
const bit<8>  IP_PROTO_UDP = 17;

/// Registers indexed by port: v1model ports are bit<9>.
const bit<32> NUM_PORTS = 512;
/// Origin ToR ids the best-hop registers hold; probes from larger ids are
/// still flooded but not learned.
const bit<32> HULA_MAX_TORS = 1024;
/// Utilisation windows of 2^10 us (about 1 ms).
const bit<8>  UTIL_WINDOW_SHIFT = 10;
/// Idle windows after which the smoothed estimate has halved to nothing.
const bit<32> UTIL_FORGET_WINDOWS = 32;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

/// The probe: 12 bytes after Ethernet. Probes are padded to 64-byte frames
/// (the size INT-label's counting model gives HULA's probes); the padding is
/// not parsed and travels as payload.
header hula_t {
    bit<32> torId;    // origin ToR (its device id)
    bit<32> maxUtil;  // largest utilisation on the path so far
    bit<32> seq;      // origin's probe number
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

/// The first four bytes of TCP and UDP: the ports ECMP hashes on.
header l4_ports_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

struct headers_t {
    ethernet_t ethernet;
    hula_t     hula;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

struct metadata_t {
    bit<16> ecmp_group;
    bit<16> ecmp_select;
}

/// Shared by ingress (reads) and egress (updates). Declared at the top
/// level so both controls see one array; p4c emits such registers for BMv2
/// since p4c pull request 1099 (issues 696 and 1097).
register<bit<32>>(NUM_PORTS) port_util;     // smoothed bytes per window
register<bit<32>>(NUM_PORTS) util_window;   // window of the bytes below
register<bit<32>>(NUM_PORTS) util_bytes;    // bytes sent in that window

parser MyParser(packet_in packet,
                out headers_t hdr,
                inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_HULA: parse_hula;
            default: accept;
        }
    }

    state parse_hula {
        packet.extract(hdr.hula);
        transition accept;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_TCP): parse_l4;
            (5, 0, IP_PROTO_UDP): parse_l4;
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
    /// HULA's per-origin state (section 3.3, "best hop table").
    register<bit<1>>(HULA_MAX_TORS)  best_known;
    register<bit<16>>(HULA_MAX_TORS) best_hop;
    register<bit<32>>(HULA_MAX_TORS) best_util;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action set_ecmp(bit<16> group, bit<16> count) {
        meta.ecmp_group = group;
        hash(meta.ecmp_select, HashAlgorithm.crc16, (bit<16>) 0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
               hdr.l4.srcPort, hdr.l4.dstPort },
             count);
    }

    /// Flood a probe to multicast group `grp`: the ports a probe arriving
    /// on this port goes on to (controller/hula.py computes them).
    action set_probe_group(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
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

    /// No entry for a port: the probe ends here (a ToR consumes probes).
    table probe_replicate {
        key = {
            standard_metadata.ingress_port: exact;
        }
        actions = {
            set_probe_group;
            drop;
        }
        size = 512;
        default_action = drop();
    }

    apply {
        if (hdr.hula.isValid()) {
            bit<32> arrival = (bit<32>) standard_metadata.ingress_port;
            bit<32> arrivalUtil;
            port_util.read(arrivalUtil, arrival);
            if (arrivalUtil > hdr.hula.maxUtil) {
                hdr.hula.maxUtil = arrivalUtil;
            }
            bit<32> tor = hdr.hula.torId;
            if (tor < HULA_MAX_TORS) {
                bit<1> known;
                bit<16> hop;
                bit<32> util;
                best_known.read(known, tor);
                best_hop.read(hop, tor);
                best_util.read(util, tor);
                if (known == 0 || hdr.hula.maxUtil < util
                        || hop == (bit<16>) standard_metadata.ingress_port) {
                    best_known.write(tor, 1);
                    best_hop.write(tor, (bit<16>) standard_metadata.ingress_port);
                    best_util.write(tor, hdr.hula.maxUtil);
                }
            }
            probe_replicate.apply();
        } else if (hdr.ipv4.isValid()) {
            // RFC 1812 5.3.1: a packet whose TTL would reach 0 is not forwarded.
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
    apply {
        bit<32> port = (bit<32>) standard_metadata.egress_port;
        bit<32> window = (bit<32>) (standard_metadata.egress_global_timestamp
                                    >> UTIL_WINDOW_SHIFT);
        bit<32> last;
        bit<32> bytes;
        bit<32> util;
        util_window.read(last, port);
        util_bytes.read(bytes, port);
        port_util.read(util, port);
        if (window != last) {
            // Close the finished window (weight 1/2), then halve once per
            // idle window since.
            bit<32> gap = window - last;
            util = (util >> 1) + (bytes >> 1);
            if (gap >= UTIL_FORGET_WINDOWS) {
                util = 0;
            } else if (gap > 1) {
                util = util >> ((bit<8>) (gap - 1));
            }
            bytes = 0;
            util_window.write(port, window);
            port_util.write(port, util);
        }
        util_bytes.write(port, bytes + standard_metadata.packet_length);
        if (hdr.hula.isValid() && util > hdr.hula.maxUtil) {
            hdr.hula.maxUtil = util;
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
    }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.hula);
        packet.emit(hdr.ipv4);
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
