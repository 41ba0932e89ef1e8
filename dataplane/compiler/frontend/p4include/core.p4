/*
 * intbed: the P4-16 core library (P4-16 spec, appendix "core.p4").
 *
 * Declares the constructs every P4-16 program may use: the standard error
 * codes, the packet_in / packet_out externs, verify, NoAction, the three
 * standard match kinds and static_assert. The names, signatures and the
 * order of the error codes match p4c's p4include/core.p4, because programs
 * written for p4c include <core.p4> unchanged and BMv2 numbers errors in
 * declaration order (parser_error values depend on it).
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/// Errors the parser can raise; a program may add its own with more
/// `error { ... }` declarations, numbered after these.
error {
    NoError,               /// 0: parsing succeeded.
    PacketTooShort,        /// extract/lookahead ran past the end of the packet.
    NoMatch,               /// no case of a `select` matched.
    StackOutOfBounds,      /// .next past the end of a stack, or .last on an empty one.
    HeaderTooShort,        /// a varbit extract asked for more bits than the field holds.
    ParserTimeout,         /// the target gave up on a parser that ran too long.
    ParserInvalidArgument  /// a parser operation got a value the target refuses.
}

/// The packet being parsed, read through a cursor.
extern packet_in {
    /// Copy the next sizeof(T) bits into `hdr`, make it valid, move on.
    /// `T` is a fixed-size header (or a stack's `.next`).
    void extract<T>(out T hdr);
    /// The same for a header with one varbit field, whose length in bits
    /// is `variableFieldSizeInBits`.
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    /// The next sizeof(T) bits, without moving the cursor.
    T lookahead<T>();
    /// Skip `sizeInBits` bits.
    void advance(in bit<32> sizeInBits);
    /// Length of the whole packet in bytes (not every target offers it).
    bit<32> length();
}

/// The packet being built by a deparser.
extern packet_out {
    /// Append `hdr` if it is a valid header; stacks, unions and structs
    /// are emitted member by member.
    void emit<T>(in T hdr);
}

/// Parser-only: when `check` is false, set the parser error to `toSignal`
/// and go to `reject`.
extern void verify(in bool check, in error toSignal);

/// The action that does nothing; the default of tables that name none.
/// @noWarn keeps p4c quiet when no table lists it, and P4Info carries it.
@noWarn("unused")
action NoAction() {}

/// Match kinds every target knows; architectures may add more.
match_kind {
    exact,   /// key equals the entry's value
    ternary, /// key & mask equals value & mask
    lpm      /// longest matching prefix wins
}

/// Compile-time assertion: compilation fails with `message` when `check`
/// is false. Returns true so it can initialise a constant.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
