/* v1model's externs and simple_switch's packet paths, for the Go target's
 * golden tests. A command byte in each frame picks what happens:
 *   1 clone at ingress, 2 clone at egress (each with a field list),
 *   3 recirculate, 4 resubmit (each keeping a field list), 5 multicast,
 *   6 truncate, 7 drop, 8 exit before the rest of ingress,
 *   9 push and pop a header stack, 10 hashes, random, registers and
 *   counters, 11 a digest, 12 priority queues, 13 a header assigned
 *   whole, 14 stack elements picked at run time, 15 a drop in egress.
 * Egress writes the standard metadata it sees into the frame. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header cmd_t { bit<8> cmd; bit<8> arg; bit<16> value; bit<32> key; }
header tag_t { bit<16> id; }
header meta_hdr_t {
    bit<32> instance_type; bit<16> ingress_port; bit<16> egress_port; bit<32> packet_length;
    bit<16> egress_rid; bit<8> passes; bit<8> kept; bit<8> priority; bit<8> qid;
}
header hashes_t {
    bit<16> crc16; bit<32> crc32; bit<16> crc16_custom; bit<32> identity; bit<16> csum16;
    bit<16> crc16_more; bit<16> xor16;
    bit<32> random; bit<32> reg_before; bit<32> reg_after; bit<16> mod;
}
struct headers_t { ethernet_t ethernet; cmd_t cmd; tag_t[3] tags; hashes_t hashes; meta_hdr_t seen; }
struct meta_t {
    @field_list(1) bit<8> passes;
    @field_list(1) bit<8> kept;
    bit<8> lost;
}
struct digest_t { bit<48> src; bit<16> value; bit<8> cmd; }

parser ParseX(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b6: parse_cmd;
            default: accept;
        }
    }
    state parse_cmd {
        pkt.extract(hdr.cmd);
        transition select(hdr.cmd.arg) {
            0: accept;
            1: one_tag;
            default: two_tags;
        }
    }
    state one_tag { pkt.extract(hdr.tags.next); transition accept; }
    state two_tags { pkt.extract(hdr.tags.next); pkt.extract(hdr.tags.next); transition accept; }
}

control VerifyX(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressX(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) seen_per_port;
    counter(8, CounterType.packets_and_bytes) frames_in;
    counter(16, CounterType.packets) commands;
    direct_counter(CounterType.packets_and_bytes) route_hits;

    action to_port(bit<9> port) { sm.egress_spec = port; route_hits.count(); }
    table route {
        key = { hdr.ethernet.dst : exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction();
        counters = route_hits;
        size = 16;
    }

    apply {
        frames_in.count((bit<32>)sm.ingress_port);
        if (!hdr.cmd.isValid()) {
            mark_to_drop(sm);
            exit;
        }
        commands.count((bit<32>)hdr.cmd.cmd);
        sm.egress_spec = 2;
        route.apply();
        if (sm.instance_type == 6) {
            meta.passes = meta.passes + 1;   /* resubmitted: the list kept passes */
        }
        if (hdr.cmd.cmd == 1) {
            meta.kept = 0x11;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
            hdr.cmd.value = 0x1111;          /* the clone does not see this */
        } else if (hdr.cmd.cmd == 4 && meta.passes < 2) {
            meta.kept = 0x44;
            resubmit_preserving_field_list(1);
        } else if (hdr.cmd.cmd == 5) {
            sm.mcast_grp = 1;
        } else if (hdr.cmd.cmd == 6) {
            truncate(20);
        } else if (hdr.cmd.cmd == 7) {
            mark_to_drop(sm);
        } else if (hdr.cmd.cmd == 8) {
            hdr.cmd.value = 0x8888;
            exit;
        } else if (hdr.cmd.cmd == 9) {
            hdr.tags.push_front(1);
            hdr.tags[0].setValid();
            hdr.tags[0].id = 0x9999;
            if (hdr.cmd.arg == 2) {
                hdr.tags.pop_front(2);
            }
        } else if (hdr.cmd.cmd == 10) {
            hdr.hashes.setValid();
            hash(hdr.hashes.crc16, HashAlgorithm.crc16, 16w0, { hdr.ethernet.src, hdr.cmd.key }, 17w65536);
            hash(hdr.hashes.crc32, HashAlgorithm.crc32, 32w0, { hdr.ethernet.src, hdr.cmd.key }, 33w4294967296);
            hash(hdr.hashes.crc16_custom, HashAlgorithm.crc16_custom, 16w0, { hdr.cmd.key }, 17w65536);
            hash(hdr.hashes.identity, HashAlgorithm.identity, 32w0, { hdr.cmd.key }, 33w4294967296);
            hash(hdr.hashes.csum16, HashAlgorithm.csum16, 16w0, { hdr.cmd.value, hdr.cmd.key }, 17w65536);
            hash(hdr.hashes.mod, HashAlgorithm.crc32, 16w100, { hdr.cmd.key }, 16w7);
            hash(hdr.hashes.crc16_more, HashAlgorithm.crc16, 16w0, { hdr.cmd.value, hdr.cmd.key, hdr.ethernet.src }, 17w65536);
            hash(hdr.hashes.xor16, HashAlgorithm.xor16, 16w0, { hdr.cmd.value, hdr.cmd.key }, 17w65536);
            random(hdr.hashes.random, hdr.cmd.key, hdr.cmd.key);
            @atomic {
                bit<32> n;
                seen_per_port.read(n, (bit<32>)sm.ingress_port);
                hdr.hashes.reg_before = n;
                n = n + (bit<32>)hdr.cmd.value;
                seen_per_port.write((bit<32>)sm.ingress_port, n);
                hdr.hashes.reg_after = n;
            }
            log_msg("cmd 10 on port {}: register now {}", { sm.ingress_port, hdr.hashes.reg_after });
        } else if (hdr.cmd.cmd == 11) {
            digest<digest_t>(1, { hdr.ethernet.src, hdr.cmd.value, hdr.cmd.cmd });
        } else if (hdr.cmd.cmd == 12) {
            sm.priority = hdr.cmd.arg[2:0];
        } else if (hdr.cmd.cmd == 14) {
            /* Stack elements picked at run time (frames carry two tags). */
            bit<8> i = (bit<8>)hdr.cmd.value[0:0];
            hdr.cmd.key = (bit<32>)hdr.tags[i].id;
            hdr.tags[i].id = 0x1414;
            hdr.tags[i + 1].setValid();
            hdr.tags[i + 1].id = 0x2222;
        } else if (hdr.cmd.cmd == 13 && hdr.tags[0].isValid()) {
            hdr.tags[1] = hdr.tags[0];       /* a whole header assigned */
            hdr.tags[1].id = hdr.tags[1].id + 1;
        }
        assert(hdr.cmd.cmd != 0xee);
        assume(hdr.cmd.cmd != 0xef);
    }
}

control EgressX(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.seen.setValid();
        hdr.seen.instance_type = sm.instance_type;
        hdr.seen.ingress_port = (bit<16>)sm.ingress_port;
        hdr.seen.egress_port = (bit<16>)sm.egress_port;
        hdr.seen.packet_length = sm.packet_length;
        hdr.seen.egress_rid = sm.egress_rid;
        hdr.seen.passes = meta.passes;
        hdr.seen.kept = meta.kept;
        hdr.seen.priority = (bit<8>)sm.priority;
        hdr.seen.qid = (bit<8>)sm.priority + 1;
        if (hdr.cmd.cmd == 15) {
            mark_to_drop(sm);                /* dropped at the end of egress */
        }
        if (hdr.cmd.cmd == 2 && sm.instance_type == 0) {
            meta.kept = 0x22;
            clone_preserving_field_list(CloneType.E2E, 6, 1);
        }
        if (hdr.cmd.cmd == 3 && sm.instance_type == 0 && meta.passes < 3) {
            meta.passes = meta.passes + 1;
            hdr.seen.setInvalid();
            recirculate_preserving_field_list(1);
        }
        if (hdr.cmd.cmd == 3 && sm.instance_type == 4 && meta.passes < 3) {
            meta.passes = meta.passes + 1;
            hdr.seen.setInvalid();
            recirculate_preserving_field_list(1);
        }
    }
}

control ComputeX(inout headers_t hdr, inout meta_t meta) { apply { } }
control DeparseX(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet); pkt.emit(hdr.cmd); pkt.emit(hdr.tags);
        pkt.emit(hdr.hashes); pkt.emit(hdr.seen);
    }
}

V1Switch(ParseX(), VerifyX(), IngressX(), EgressX(), ComputeX(), DeparseX()) main;
