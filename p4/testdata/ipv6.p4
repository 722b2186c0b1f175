/* Fields over 64 bits, for the Go target's golden tests: IPv6 addresses
 * extracted and deparsed, an LPM and a ternary table on them, compared
 * with == and !=, against a constant, copied (a swap through a local),
 * rewritten from a 128-bit action parameter, and hashed. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv6_t {
    bit<4> version; bit<8> traffic_class; bit<20> flow_label; bit<16> payload_len;
    bit<8> next_hdr; bit<8> hop_limit; bit<128> src; bit<128> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> checksum; }
struct headers_t { ethernet_t ethernet; ipv6_t ipv6; udp_t udp; }
struct meta_t { bit<128> tmp; bit<32> h; }

parser Parse6(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x86dd: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.next_hdr) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
}

control Verify6(inout headers_t hdr, inout meta_t meta) { apply { } }

control Ingress6(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action to_port(bit<9> port) { sm.egress_spec = port; }
    action set_class(bit<8> tc) { hdr.ipv6.traffic_class = tc; }
    action rewrite_dst(bit<128> addr, bit<8> tc) { hdr.ipv6.dst = addr; hdr.ipv6.traffic_class = tc; }

    table route_v6 {
        key = { hdr.ipv6.dst : lpm; }
        actions = { to_port; drop; }
        default_action = drop();
        size = 64;
    }
    table acl_v6 {
        key = { hdr.ipv6.src : ternary; hdr.ipv6.next_hdr : exact; }
        actions = { set_class; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    table nat_v6 {
        key = { hdr.ipv6.dst : exact; }
        actions = { rewrite_dst; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        if (!hdr.ipv6.isValid()) {
            drop();
            exit;
        }
        if (hdr.ipv6.src == hdr.ipv6.dst || hdr.ipv6.src == 128w1) {
            drop();         /* a packet to itself, or from ::1 */
            exit;
        }
        nat_v6.apply();
        route_v6.apply();
        acl_v6.apply();
        if (hdr.ipv6.hop_limit == 1) {
            /* Back where it came from, addresses swapped. */
            meta.tmp = hdr.ipv6.src;
            hdr.ipv6.src = hdr.ipv6.dst;
            hdr.ipv6.dst = meta.tmp;
            sm.egress_spec = sm.ingress_port;
        }
        if (hdr.udp.isValid() && hdr.ipv6.dst != 0x20010db8000000000000000000000099) {
            hash(meta.h, HashAlgorithm.crc32, 32w0, { hdr.ipv6.src, hdr.ipv6.dst, hdr.udp.sport }, 33w4294967296);
            hdr.udp.checksum = meta.h[15:0];
        }
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }
}

control Egress6(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Compute6(inout headers_t hdr, inout meta_t meta) { apply { } }
control Deparse6(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv6); pkt.emit(hdr.udp); }
}

V1Switch(Parse6(), Verify6(), Ingress6(), Egress6(), Compute6(), Deparse6()) main;
