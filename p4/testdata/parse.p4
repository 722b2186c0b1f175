/* Parser and deparser constructs, for the Go target's golden tests:
 * header stacks, a header union, select on a masked key, on two fields,
 * on lookahead and on a value set, verify, parser errors, and checksum
 * verify and update. The ingress writes what the parser found into a
 * report header that the deparser puts after Ethernet. */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_VLAN = 0x8100;
const bit<16> TYPE_IPV4 = 0x0800;
const bit<16> TYPE_PROBE = 0x88b6;
const bit<16> TYPE_REPORT = 0x88b7;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> total_len;
    bit<16> id; bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> protocol;
    bit<16> checksum; bit<32> src; bit<32> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> checksum; }
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<16> flags; bit<16> window; bit<16> checksum; bit<16> urgent; }
header_union l4_t { udp_t udp; tcp_t tcp; }
header probe_t { bit<8> kind; bit<8> len; bit<16> value; }
header report_t {
    bit<8> vlans; bit<8> l4; bit<32> parser_error; bit<8> checksum_error;
    bit<16> kind; bit<16> probe_value; bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
    report_t report;
    vlan_t[2] vlans;
    ipv4_t ipv4;
    l4_t l4;
    probe_t[3] probes;
}
struct meta_t { bit<16> kind; bit<8> probes_left; }

parser ParseP(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special_types;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            TYPE_VLAN: parse_vlan;
            TYPE_IPV4: parse_ipv4;
            TYPE_PROBE: parse_probes;
            special_types: special;
            0x8800 &&& 0xff00: masked;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlans.next);
        transition select(hdr.vlans.last.ether_type) {
            TYPE_VLAN: parse_vlan;
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.HeaderTooShort);
        transition select(hdr.ipv4.frag, hdr.ipv4.protocol) {
            (0, 17): parse_udp;
            (0, 6): parse_tcp;
            default: accept;
        }
    }
    state parse_udp { pkt.extract(hdr.l4.udp); transition accept; }
    state parse_tcp { pkt.extract(hdr.l4.tcp); transition accept; }
    state parse_probes {
        /* A kind-length-value list, ended by kind 0: lookahead decides;
         * kind 3 is padding, skipped with advance. */
        transition select(pkt.lookahead<bit<8>>()) {
            0: accept;
            3: skip_pad;
            default: parse_probe;
        }
    }
    state skip_pad {
        pkt.advance(32);
        transition parse_probes;
    }
    state parse_probe {
        pkt.extract(hdr.probes.next);
        transition parse_probes;
    }
    state special { meta.kind = 1; transition accept; }
    state masked { meta.kind = 2; transition accept; }
}

control VerifyP(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }
}

control IngressP(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.report.setValid();
        hdr.report.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = TYPE_REPORT;
        hdr.report.vlans = hdr.vlans[0].isValid() ? (hdr.vlans[1].isValid() ? 8w2 : 8w1) : 8w0;
        if (hdr.l4.udp.isValid()) {
            hdr.report.l4 = 17;
        } else if (hdr.l4.tcp.isValid()) {
            hdr.report.l4 = 6;
        }
        /* P4 has no cast from error to bits: number them. */
        if (sm.parser_error == error.NoError) {
            hdr.report.parser_error = 0;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.report.parser_error = 1;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.report.parser_error = 2;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            hdr.report.parser_error = 3;
        } else if (sm.parser_error == error.HeaderTooShort) {
            hdr.report.parser_error = 4;
        } else {
            hdr.report.parser_error = 99;
        }
        hdr.report.checksum_error = (bit<8>)sm.checksum_error;
        hdr.report.kind = meta.kind;
        if (hdr.probes[0].isValid()) {
            hdr.report.probe_value = hdr.probes[0].value + (hdr.probes[1].isValid() ? hdr.probes[1].value : 16w0);
        }
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
        /* A TCP segment becomes a UDP header in the union: making one
         * member valid invalidates the other. */
        if (hdr.l4.tcp.isValid() && hdr.ipv4.tos == 1) {
            bit<16> sport = hdr.l4.tcp.sport;
            hdr.l4.udp.setValid();
            hdr.l4.udp.sport = sport;
            hdr.l4.udp.dport = 9;
            hdr.l4.udp.len = 8;
        }
        /* Back out of the port it came in on, plus one. */
        sm.egress_spec = sm.ingress_port + 1;
    }
}

control EgressP(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control ComputeP(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.checksum, HashAlgorithm.csum16);
    }
}

control DeparseP(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.report);
        pkt.emit(hdr.vlans);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
        pkt.emit(hdr.probes);
    }
}

V1Switch(ParseP(), VerifyP(), IngressP(), EgressP(), ComputeP(), DeparseP()) main;
