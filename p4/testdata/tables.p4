/* Tables, for the Go target's golden tests: exact, LPM, ternary with
 * priorities, range, optional and a key that is a slice; const entries
 * and const and changeable default actions; branching on hit, miss and
 * the action run. Frames carry the keys in a header of their own and go
 * back with what each table did written into it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header keys_t {
    bit<32> addr; bit<16> port; bit<8> proto; bit<8> flags;
    bit<32> r_exact; bit<32> r_lpm; bit<32> r_tern; bit<32> r_range;
    bit<32> r_opt; bit<32> r_const; bit<32> r_slice; bit<8> path;
}
struct headers_t { ethernet_t ethernet; keys_t keys; }
struct meta_t { }

parser ParseT(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b6: parse_keys;
            default: accept;
        }
    }
    state parse_keys { pkt.extract(hdr.keys); transition accept; }
}

control VerifyT(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressT(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_exact(bit<32> v) { hdr.keys.r_exact = v; }
    action set_lpm(bit<32> v) { hdr.keys.r_lpm = v; }
    action set_tern(bit<32> v) { hdr.keys.r_tern = v; }
    action other_tern(bit<32> v) { hdr.keys.r_tern = v + 1000; }
    action set_range(bit<32> v) { hdr.keys.r_range = v; }
    action set_opt(bit<32> v) { hdr.keys.r_opt = v; }
    action set_const(bit<32> v) { hdr.keys.r_const = v; }
    action set_slice(bit<32> v) { hdr.keys.r_slice = v; }
    action drop() { mark_to_drop(sm); }

    table exact_t {
        key = { hdr.keys.proto : exact; hdr.keys.flags : exact; }
        actions = { set_exact; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table lpm_t {
        key = { hdr.keys.addr : lpm; }
        actions = { set_lpm; }
        default_action = set_lpm(0xffffffff);
        size = 64;
    }
    table tern_t {
        key = { hdr.keys.addr : ternary; hdr.keys.port : ternary; }
        actions = { set_tern; other_tern; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table range_t {
        key = { hdr.keys.port : range; hdr.keys.proto : exact; }
        actions = { set_range; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table opt_t {
        key = { hdr.keys.proto : optional; hdr.keys.flags : optional; }
        actions = { set_opt; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table const_t {
        key = { hdr.keys.flags : ternary; }
        actions = { set_const; }
        const default_action = set_const(99);
        const entries = {
            0x01 &&& 0x0f : set_const(1);
            0x10 &&& 0xf0 : set_const(2);
            0x11 &&& 0xff : set_const(3);
        }
    }
    table slice_t {
        key = { hdr.keys.addr[31:24] : exact; }
        actions = { set_slice; NoAction; }
        default_action = NoAction();
        size = 16;
    }

    apply {
        if (!hdr.keys.isValid()) {
            drop();
            exit;
        }
        exact_t.apply();
        if (lpm_t.apply().hit) {
            hdr.keys.path = 1;
        } else {
            hdr.keys.path = 2;
        }
        switch (tern_t.apply().action_run) {
            set_tern: { hdr.keys.path = hdr.keys.path + 10; }
            other_tern: { hdr.keys.path = hdr.keys.path + 20; }
            default: { hdr.keys.path = hdr.keys.path + 30; }
        }
        if (range_t.apply().miss) {
            hdr.keys.path = hdr.keys.path + 100;
        }
        opt_t.apply();
        const_t.apply();
        slice_t.apply();
        sm.egress_spec = 2;
    }
}

control EgressT(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control ComputeT(inout headers_t hdr, inout meta_t meta) { apply { } }
control DeparseT(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.keys); }
}

V1Switch(ParseT(), VerifyT(), IngressT(), EgressT(), ComputeT(), DeparseT()) main;
