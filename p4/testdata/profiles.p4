/* Action profiles, action selectors and meters, for the Go target's
 * golden tests: a table whose actions are members of a profile, an
 * ECMP-like table whose entries are groups picked by a CRC-16 of the
 * 5-tuple, an indirect meter and a direct meter, each colour written
 * into the frame. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header flow_t {
    bit<32> src; bit<32> dst; bit<16> sport; bit<16> dport; bit<8> proto;
    bit<8> meter_idx; bit<16> member_out; bit<8> color_indirect; bit<8> color_direct;
}
struct headers_t { ethernet_t ethernet; flow_t flow; }
struct meta_t { bit<8> color; }

parser ParseA(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b6: parse_flow;
            default: accept;
        }
    }
    state parse_flow { pkt.extract(hdr.flow); transition accept; }
}

control VerifyA(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressA(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) policer;
    direct_meter<bit<8>>(MeterType.bytes) shaper;

    action set_out(bit<9> port, bit<16> tag) { sm.egress_spec = port; hdr.flow.member_out = tag; }
    action metered() { shaper.read(meta.color); }

    action_profile(16) profiled_members;
    action_selector(HashAlgorithm.crc16, 32, 16) spread_members;

    table profiled {
        key = { hdr.flow.dst : exact; }
        actions = { set_out; }
        implementation = profiled_members;
        size = 16;
    }
    table spread {
        key = {
            hdr.flow.dst : lpm;
            hdr.flow.src : selector;
            hdr.flow.dst : selector;
            hdr.flow.sport : selector;
            hdr.flow.dport : selector;
            hdr.flow.proto : selector;
        }
        actions = { set_out; }
        implementation = spread_members;
        size = 16;
    }
    table shaped {
        key = { hdr.flow.sport : exact; }
        actions = { metered; NoAction; }
        default_action = NoAction();
        meters = shaper;
        size = 16;
    }

    apply {
        if (!hdr.flow.isValid()) {
            mark_to_drop(sm);
            exit;
        }
        sm.egress_spec = 1;
        if (!profiled.apply().hit) {
            spread.apply();
        }
        policer.execute_meter((bit<32>)hdr.flow.meter_idx, hdr.flow.color_indirect);
        meta.color = 0xff;
        shaped.apply();
        hdr.flow.color_direct = meta.color;
    }
}

control EgressA(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control ComputeA(inout headers_t hdr, inout meta_t meta) { apply { } }
control DeparseA(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.flow); }
}

V1Switch(ParseA(), VerifyA(), IngressA(), EgressA(), ComputeA(), DeparseA()) main;
