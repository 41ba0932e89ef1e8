/*
 * intbed: the v1model architecture (the P4-16 face of BMv2 simple_switch).
 *
 * Declares what p4c's p4include/v1model.p4 declares, with the same names,
 * widths, type parameters and overloads, so that programs written for
 * p4c + BMv2 compile here unchanged and their P4Info names agree.
 * Behaviour follows BMv2's docs/simple_switch.md; the comments below say
 * what simple_switch does, not how intbed implements it.
 *
 * V1MODEL_VERSION selects between the two generations of the file, as in
 * p4c: 20180101 (the default, what p4c compiles P4-16 programs with) has
 * bit<32> indices for counter/meter/register; 20200408 or later adds the
 * index type parameter I and the PortId_t typedef. Define it before
 * including this file (or with -D) to pick the newer one.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

/// Match kinds simple_switch adds to exact/ternary/lpm.
match_kind {
    range,    /// lo <= key <= hi; entries carry a priority
    optional, /// exact value or wildcard; entries carry a priority
    selector  /// key fields hashed by an action_selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

/// Per-packet intrinsic state. @alias gives BMv2's internal field names.
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t    ingress_port;
    PortId_t    egress_spec;   /// ingress output choice; 511 drops
    PortId_t    egress_port;   /// the port the packet leaves by (egress)
#else
    bit<9>      ingress_port;
    bit<9>      egress_spec;
    bit<9>      egress_port;
#endif
    /// 0 normal, 1 ingress clone, 2 egress clone, 3 coalesced,
    /// 4 recirculated, 5 multicast replica, 6 resubmitted.
    bit<32>     instance_type;
    bit<32>     packet_length;  /// bytes, as received (or recirculated)

    /// Queueing data, valid in egress; timestamps in microseconds,
    /// depths in packets.
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;

    /// Microseconds since the switch started.
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    /// Nonzero at the end of ingress: replicate to this multicast group.
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;
    /// Replication id of a multicast copy (egress only).
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;
    /// 1 when a verify_checksum call found a mismatch.
    bit<1>  checksum_error;
    /// The error the parser ended with; error.NoError when it accepted.
    error   parser_error;
    /// Egress queue priority (0 lowest).
    @alias("intrinsic_metadata.priority")
    bit<3>  priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/// An array of `size` counters; an index >= size counts nothing.
extern counter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

/// One counter per entry of the table naming it in `counters = ...`;
/// simple_switch counts every hit whether or not an action calls count().
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/// Colours written by execute_meter / read (RFC 2697 / 2698).
#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/// An array of `size` two-rate three-colour meters.
extern meter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

/// One meter per entry of the table naming it in `meters = ...`.
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/// An array of `size` values of type T (bit<W> or int<W>) kept across
/// packets. An out-of-range write does nothing; an out-of-range read
/// leaves an unspecified result.
#if V1MODEL_VERSION >= 20200408
extern register<T, I>
#else
extern register<T>
#endif
{
    register(bit<32> size);
    @noSideEffects
#if V1MODEL_VERSION >= 20200408
    void read(out T result, in I index);
#else
    void read(out T result, in bit<32> index);
#endif
#if V1MODEL_VERSION >= 20200408
    void write(in I index, in T value);
#else
    void write(in bit<32> index, in T value);
#endif
}

/// Table implementation holding shared action data (`implementation =`).
extern action_profile {
    action_profile(bit<32> size);
}

/// A uniformly random value in [lo, hi] (unspecified when lo > hi).
extern void random<T>(out T result, in T lo, in T hi);

/// Send `data` to the control plane; a named struct type names the digest.
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/// Old form, kept for P4_14 translations.
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/// Set egress_spec to the drop port (511) and mcast_grp to 0; later code
/// may still overwrite either.
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/// result = base + (H(data) % max), or base when max is 0.
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data,
                              in M max);

/// Table implementation choosing a member of a group by hashing the
/// `selector` key fields.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/// In VerifyChecksum: when `condition` holds and `checksum` differs from
/// the checksum of `data`, set standard_metadata.checksum_error to 1.
extern void verify_checksum<T, O>(in bool condition, in T data,
                                  in O checksum, HashAlgorithm algo);

/// In ComputeChecksum: when `condition` holds, write the checksum of
/// `data` into `checksum`.
@pure
extern void update_checksum<T, O>(in bool condition, in T data,
                                  inout O checksum, HashAlgorithm algo);

/// As verify_checksum, with the unparsed payload appended to `data`.
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data,
                                               in O checksum, HashAlgorithm algo);

/// As update_checksum, with the unparsed payload appended to `data`.
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data,
                                               inout O checksum, HashAlgorithm algo);

/// At the end of this ingress (I2E) or egress (E2E), send a copy to the
/// clone session `session`, preserving no user metadata.
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);

/// Ingress only: run ingress again on the original packet, keeping the
/// user metadata fields annotated @field_list(index).
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

/// Egress only: feed the deparsed packet back to the parser, keeping the
/// user metadata fields annotated @field_list(index).
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

/// clone() that also keeps the user metadata fields annotated
/// @field_list(index).
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/// Send at most `length` bytes of the outgoing packet.
extern void truncate(in bit<32> length);

/// Debugging aids: simple_switch logs and stops when `check` is false.
extern void assert(in bool check);
extern void assume(in bool check);

/// Log a message; `{}` in `msg` is replaced by the fields of `data`.
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/// The six programmable blocks of V1Switch, in packet order.
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif  /* _V1_MODEL_P4_ */
