/* Expressions, for the Go target's golden tests: wrap-around of bit<W>
 * arithmetic at 8, 16, 32 and 64 bits, int<W> arithmetic and comparison,
 * shifts (arithmetic for signed values, by more than the width),
 * saturating operations, slices read and written, concatenation, casts
 * that extend the sign, boolean operators, conditional expressions and
 * validity. Each result goes into a field of the frame. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ops_t {
    bit<8> a; bit<8> b; bit<16> c; bit<32> d; bit<64> e; int<8> s; int<16> t;
}
header opt_t { bit<8> x; }
header res_t {
    bit<8> add8; bit<8> sub8; bit<8> mul8; bit<16> shl16; bit<16> shr16; bit<32> xor32;
    bit<32> not32; bit<64> add64; bit<64> shr64; bit<16> concat; bit<8> slice; bit<8> slice_set;
    int<8> adds; bit<8> neg; int<8> sshr; int<8> sats; bit<8> satu; bit<8> logic; bit<8> big;
    bit<32> sext; bit<16> shl_far; bit<8> cmp_signed; bit<8> valid; bit<8> mixed; bit<64> mul64;
    int<16> subs; bit<8> ternary;
}
struct headers_t { ethernet_t ethernet; ops_t ops; opt_t opt; res_t res; }
struct meta_t { }

parser ParseE(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b6: parse_ops;
            default: accept;
        }
    }
    state parse_ops {
        pkt.extract(hdr.ops);
        transition select(hdr.ops.a) {
            0xff: parse_opt;
            default: accept;
        }
    }
    state parse_opt { pkt.extract(hdr.opt); transition accept; }
}

control VerifyE(inout headers_t hdr, inout meta_t meta) { apply { } }

control IngressE(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (!hdr.ops.isValid()) {
            mark_to_drop(sm);
            exit;
        }
        hdr.res.setValid();
        bit<8> a = hdr.ops.a;
        bit<8> b = hdr.ops.b;
        hdr.res.add8 = a + b;
        hdr.res.sub8 = a - b;
        hdr.res.mul8 = a * b;
        hdr.res.shl16 = hdr.ops.c << 3;
        hdr.res.shr16 = hdr.ops.c >> b[2:0];
        hdr.res.xor32 = hdr.ops.d ^ 0xdeadbeef;
        hdr.res.not32 = ~hdr.ops.d;
        hdr.res.add64 = hdr.ops.e + 1;
        hdr.res.shr64 = hdr.ops.e >> 4;
        hdr.res.concat = a ++ b;
        hdr.res.slice = hdr.ops.d[15:8];
        hdr.res.slice_set = 0xff;
        hdr.res.slice_set[5:2] = a[3:0];
        hdr.res.adds = hdr.ops.s + (int<8>)b;
        hdr.res.neg = -a;
        hdr.res.sshr = hdr.ops.s >> 2;
        hdr.res.sats = hdr.ops.s |+| 100;
        hdr.res.satu = a |-| b;
        hdr.res.logic = ((a > b && hdr.ops.c != 0) || !(hdr.ops.d == 5)) ? 8w1 : 8w0;
        hdr.res.big = hdr.ops.e > 0x7fffffffffffffff ? 8w1 : 8w0;
        hdr.res.sext = (bit<32>)(int<32>)hdr.ops.s;
        hdr.res.shl_far = hdr.ops.c << b;
        hdr.res.cmp_signed = hdr.ops.s < (int<8>)hdr.ops.t[7:0] ? 8w1 : 8w0;
        hdr.res.valid = hdr.opt.isValid() ? 8w1 : 8w0;
        hdr.res.mixed = (a & b) | hdr.ops.c[7:0];
        hdr.res.mul64 = hdr.ops.e * (bit<64>)hdr.ops.d;
        hdr.res.subs = hdr.ops.t - 300;
        hdr.res.ternary = a == b ? a : (a > b ? a - b : b - a);
        sm.egress_spec = 2;
    }
}

control EgressE(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control ComputeE(inout headers_t hdr, inout meta_t meta) { apply { } }
control DeparseE(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ops); pkt.emit(hdr.opt); pkt.emit(hdr.res); }
}

V1Switch(ParseE(), VerifyE(), IngressE(), EgressE(), ComputeE(), DeparseE()) main;
