/*
 * Header stacks: a parser loop over .next, .last and .lastIndex, the
 * StackOutOfBounds error on a full stack, and pop_front / push_front /
 * constant indexing in ingress. See header_stack.stf.
 */

#include <core.p4>
#include <v1model.p4>

/// One stack element: a 7-bit value and a bottom-of-stack bit.
header item_t {
    bit<7> val;
    bit<1> bos;
}

/// Written by ingress in front of the stack.
header summary_t {
    bit<8> count;     /// lastIndex + 1 as seen by the parser
    bit<8> last_val;  /// .last.val as seen by the parser
    bit<8> err;       /// 0 NoError, 1 StackOutOfBounds, 0xff other
}

struct headers_t {
    summary_t summary;
    item_t[4] items;
}

struct meta_t {
    bit<32> last_index;
    bit<7>  last_val;
}

parser StackParser(packet_in packet,
                   out headers_t hdr,
                   inout meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        transition parse_item;
    }

    state parse_item {
        packet.extract(hdr.items.next);
        meta.last_index = hdr.items.lastIndex;
        meta.last_val = hdr.items.last.val;
        transition select(hdr.items.last.bos) {
            1w1: accept;
            default: parse_item;
        }
    }
}

control StackVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StackIngress(inout headers_t hdr,
                     inout meta_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        hdr.summary.setValid();
        hdr.summary.count = (bit<8>)meta.last_index + 1;
        hdr.summary.last_val = (bit<8>)meta.last_val;
        if (standard_metadata.parser_error == error.NoError) {
            hdr.summary.err = 0;
        } else if (standard_metadata.parser_error == error.StackOutOfBounds) {
            hdr.summary.err = 1;
        } else {
            hdr.summary.err = 0xff;
        }

        // The first element's value selects a stack operation.
        if (hdr.items[0].val == 1) {
            hdr.items.pop_front(1);
        } else if (hdr.items[0].val == 2) {
            hdr.items.push_front(1);
            hdr.items[0].setValid();
            hdr.items[0].val = 0x55;
            hdr.items[0].bos = 0;
        } else if (hdr.items[0].val == 3 && hdr.items[2].isValid()) {
            // Constant index writes into the middle of the stack.
            hdr.items[2].val = 0x7f;
        }
        standard_metadata.egress_spec = 1;
    }
}

control StackEgress(inout headers_t hdr,
                    inout meta_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control StackCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StackDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.summary);
        packet.emit(hdr.items);
    }
}

V1Switch(StackParser(), StackVerify(), StackIngress(), StackEgress(),
         StackCompute(), StackDeparser()) main;
