// A test program for the controlplane package: for every frame, a digest
// of its source MAC address and ingress port, and a count per ingress
// port; then the frame is dropped.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t { ethernet_t eth; }
struct meta_t { }
struct seen_t {
    bit<48> src_addr;
    bit<9>  port;
}

parser SeenParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control SeenVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control SeenIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) rx;
    apply {
        rx.count((bit<32>)sm.ingress_port);
        digest<seen_t>(1, {hdr.eth.src_addr, sm.ingress_port});
        mark_to_drop(sm);
    }
}

control SeenEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control SeenCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control SeenDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(SeenParser(), SeenVerify(), SeenIngress(), SeenEgress(), SeenCompute(), SeenDeparser()) main;
