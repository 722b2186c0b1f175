/* The P4Runtime server's test program: one of everything a controller
 * programs. Frames from the CPU port (64) start with a packet_out header
 * naming their egress port; frames sent to the CPU port start with a
 * packet_in header naming their ingress port. A data header's op picks
 * what ingress does:
 *   1 a big exact table with a direct counter (also the read benchmark's),
 *   2 a table whose actions are profile members, 3 a selector table,
 *   4 a direct meter and an indirect meter, colours written into the frame,
 *   5 a register written and read back, 6 a digest, 7 punt to the CPU,
 *   8 clone to the session in key, 9 multicast to the group in key.
 * The data header is parsed only for EtherTypes in a value set. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 64

@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; bit<16> tag; }

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; bit<8> reason; }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header data_t {
    bit<32> key; bit<16> port; bit<8> op; bit<8> color_direct;
    bit<8> color_indirect; bit<8> copy; bit<32> reg;
}

struct headers_t { packet_out_t packet_out; packet_in_t packet_in; ethernet_t ethernet; data_t data; }
struct meta_t { bit<8> color; }
struct learn_t { bit<48> src; bit<9> port; }

parser ParseR(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) data_types;
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out { pkt.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            data_types: parse_data;
            default: accept;
        }
    }
    state parse_data { pkt.extract(hdr.data); transition accept; }
}

control VerifyR(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressR(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(32, CounterType.packets_and_bytes) port_frames;
    direct_counter(CounterType.packets_and_bytes) big_hits;
    meter(16, MeterType.packets) port_meter;
    direct_meter<bit<8>>(MeterType.bytes) flow_meter;
    register<bit<32>>(16) last_key;
    action_profile(32) members;
    action_selector(HashAlgorithm.crc16, 32, 14) spread;

    action drop() { mark_to_drop(sm); }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action forward_counted(bit<9> port) { sm.egress_spec = port; big_hits.count(); }
    action colour() { flow_meter.read(meta.color); }

    table big_t {
        key = { hdr.data.key : exact; }
        actions = { forward_counted; NoAction; }
        default_action = NoAction();
        counters = big_hits;
        size = 16384;
    }
    table prof_t {
        key = { hdr.data.port : exact; }
        actions = { forward; drop; }
        implementation = members;
        size = 32;
    }
    table sel_t {
        key = { hdr.data.key : lpm; hdr.ethernet.src : selector; hdr.data.port : selector; }
        actions = { forward; drop; }
        implementation = spread;
        size = 32;
    }
    table metered_t {
        key = { hdr.data.port : ternary; }
        actions = { colour; NoAction; }
        default_action = NoAction();
        meters = flow_meter;
        size = 16;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        port_frames.count((bit<32>)sm.ingress_port);
        if (!hdr.data.isValid()) {
            mark_to_drop(sm);
            exit;
        }
        sm.egress_spec = 2;
        if (hdr.data.op == 1) {
            big_t.apply();
        } else if (hdr.data.op == 2) {
            prof_t.apply();
        } else if (hdr.data.op == 3) {
            sel_t.apply();
        } else if (hdr.data.op == 4) {
            if (metered_t.apply().hit) {
                hdr.data.color_direct = meta.color;
            }
            port_meter.execute_meter((bit<32>)hdr.data.port, hdr.data.color_indirect);
        } else if (hdr.data.op == 5) {
            last_key.write((bit<32>)hdr.data.port, hdr.data.key);
            last_key.read(hdr.data.reg, (bit<32>)hdr.data.port);
        } else if (hdr.data.op == 6) {
            digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });
        } else if (hdr.data.op == 7) {
            sm.egress_spec = CPU_PORT;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in.reason = 7;
        } else if (hdr.data.op == 8) {
            clone(CloneType.I2E, hdr.data.key);
        } else if (hdr.data.op == 9) {
            sm.mcast_grp = (bit<16>)hdr.data.key;
        }
    }
}

control EgressR(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.data.isValid() && sm.instance_type == 1) {
            hdr.data.copy = 1;   /* an ingress clone */
        }
    }
}

control ComputeR(inout headers_t hdr, inout meta_t meta) { apply { } }

control DeparseR(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.packet_in); pkt.emit(hdr.ethernet); pkt.emit(hdr.data); }
}

V1Switch(ParseR(), VerifyR(), IngressR(), EgressR(), ComputeR(), DeparseR()) main;
