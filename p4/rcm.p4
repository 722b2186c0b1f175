/* p4rcm's switch program for BMv2's v1model: IPv4 forwarding with ECMP and
 * RED/ECN marking at egress, mirroring the Go switch model (dataplane).
 * PFC emulation and RCM (CFR CAM, CRD, CNs, RCC, SAR) follow. */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"

struct metadata_t {
    bit<8>  cn_left;     /* CN flows the parser still has to read */
    bool    forwarded;   /* ingress chose an egress port */
    bool    ecmp;        /* the route is an ECMP group */
    bit<16> ecmp_member; /* the group member the hash picked */
}

#include "include/parser.p4"

/* Ports BMv2 may number, with the CPU port (255) among them. */
#define NUM_PORTS 512

/* Each egress queue's occupancy in bytes: BMv2's queue depths count
 * packets. A packet adds its length when it is sent to a port and takes
 * it away when it leaves; both controls share the register. */
register<bit<32>>(NUM_PORTS) queue_bytes;

control RcmVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RcmIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_frames;
    counter(NUM_PORTS, CounterType.packets) no_route;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* Out of port to the next hop's MAC address. */
    action set_nexthop(port_t port, bit<48> src_mac, bit<48> dst_mac) {
        standard_metadata.egress_spec = port;
        meta.forwarded = true;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* ECMP: the next hops of a group are ecmp_member entries base to
     * base + size - 1; the 5-tuple's hash picks one. (Not an action
     * selector: with one, p4c's BMv2 back end cannot give the table a
     * default action and warns; see p4/README.md.) */
    action set_ecmp_group(bit<16> base, bit<16> size) {
        hash(meta.ecmp_member, HashAlgorithm.crc16, base,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               hdr.udp.src_port, hdr.udp.dst_port },
             size);
        meta.ecmp = true;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { set_nexthop; set_ecmp_group; drop; }
        default_action = drop();
        size = 1024;
    }

    table ecmp_member {
        key = { meta.ecmp_member: exact; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 4096;
    }

    apply {
        rx_frames.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            if (!ipv4_lpm.apply().hit) {
                no_route.count((bit<32>)standard_metadata.ingress_port);
            } else if (meta.ecmp) {
                ecmp_member.apply();
            }
        } else {
            drop();
        }
        if (meta.forwarded) {
            @atomic {
                bit<32> q;
                queue_bytes.read(q, (bit<32>)standard_metadata.egress_spec);
                queue_bytes.write((bit<32>)standard_metadata.egress_spec, q + standard_metadata.packet_length);
            }
        }
    }
}

control RcmEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets) ecn_marks;
    counter(NUM_PORTS, CounterType.packets) wred_drops;

    bit<32> kmin = 0;
    bit<32> kmax = 0;
    bit<32> slope = 0;
    bit<32> wred_k = 0;
    bool red_on = false;

    /* The port's RED/ECN curve: mark ECN-capable packets with a
     * probability rising from 0 at kmin bytes to pmax at kmax, all
     * beyond; slope is pmax * 2^32 / (kmax - kmin), from the controller,
     * since the target has no division. WRED drops packets that are not
     * ECN-capable above wred_k bytes (0: never). */
    action set_red(bit<32> kmin_bytes, bit<32> kmax_bytes, bit<32> pmax_slope, bit<32> wred_k_bytes) {
        kmin = kmin_bytes;
        kmax = kmax_bytes;
        slope = pmax_slope;
        wred_k = wred_k_bytes;
        red_on = true;
    }

    table red_config {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_red; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    apply {
        bit<32> q;
        @atomic {
            queue_bytes.read(q, (bit<32>)standard_metadata.egress_port);
            bit<32> left = 0;
            if (q > standard_metadata.packet_length) {
                left = q - standard_metadata.packet_length;
            }
            queue_bytes.write((bit<32>)standard_metadata.egress_port, left);
        }
        red_config.apply();
        if (red_on && hdr.ipv4.isValid()) {
            if (hdr.ipv4.ecn == 0) {
                if (wred_k != 0 && q > wred_k) {
                    wred_drops.count((bit<32>)standard_metadata.egress_port);
                    mark_to_drop(standard_metadata);
                }
            } else if (q >= kmax) {
                hdr.ipv4.ecn = 3;
                ecn_marks.count((bit<32>)standard_metadata.egress_port);
            } else if (q > kmin) {
                bit<32> r;
                random(r, 0, 0xFFFFFFFF);
                if (r < (q - kmin) * slope) {
                    hdr.ipv4.ecn = 3;
                    ecn_marks.count((bit<32>)standard_metadata.egress_port);
                }
            }
        }
    }
}

control RcmComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

V1Switch(RcmParser(), RcmVerifyChecksum(), RcmIngress(), RcmEgress(),
         RcmComputeChecksum(), RcmDeparser()) main;
