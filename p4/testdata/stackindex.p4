/* A stack element's validity tested at run time (hdr.tags[i].isValid()),
 * which BMv2 1.15.5 cannot load: checked by a unit test of the Go target
 * (v1model TestStackIndexValidity), not by a golden file. */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header tag_t { bit<8> v; }
struct headers_t { ethernet_t ethernet; tag_t[4] tags; }
struct meta_t { bit<2> i; bit<8> o; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); pkt.extract(hdr.tags.next); pkt.extract(hdr.tags.next); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control IngressS(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.i = (bit<2>)hdr.ethernet.ether_type;
        meta.o = hdr.tags[meta.i].v;
        hdr.tags[meta.i].v = 7;
        if (hdr.tags[meta.i].isValid()) { hdr.tags[0].v = meta.o; }
        hdr.tags[meta.i].setValid();
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.tags); } }
V1Switch(P(), V(), IngressS(), E(), C(), D()) main;
