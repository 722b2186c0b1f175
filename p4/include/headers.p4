/* Packet formats of p4rcm: RoCEv2 data and CNPs, 802.1Qbb PFC frames,
 * RCM congestion notifications and in-band telemetry (INT) for HPCC (docs
 * in p4/README.md). */
#ifndef P4RCM_HEADERS_P4
#define P4RCM_HEADERS_P4

const bit<16> ETHERTYPE_IPV4   = 0x0800;
const bit<16> ETHERTYPE_PFC    = 0x8808; /* MAC control */
const bit<16> ETHERTYPE_RCM_CN = 0x88B5; /* local experimental */
const bit<8>  IPPROTO_UDP      = 17;
const bit<16> UDP_PORT_ROCEV2  = 4791;
const bit<16> PFC_OPCODE       = 0x0101;
const bit<48> PFC_DST_MAC      = 0x0180C2000001; /* MAC control */
const bit<32> PFC_FRAME_BYTES  = 60; /* a minimum frame without FCS */
const bit<4>  RCM_CN_VERSION   = 1;
const bit<32> RCM_CN_BYTES     = 18; /* Ethernet and the CN header */
const bit<32> RCM_FLOW_BYTES   = 13; /* one 5-tuple */

/* A CN names at most this many flows (dataplane.MaxCNFlows). */
#define MAX_CN_FLOWS 8

/* INT: a data packet asks the switches for telemetry with this bit of
 * its DSCP (the lowest, so that the class selector, DSCP >> 3, and with
 * it the PFC priority, stay: RoCE's 26 asks as 27). Its INT header then
 * follows the BTH. */
const bit<4>  INT_VERSION   = 1;
const bit<32> INT_HOP_BYTES = 16;
/* Hops a stack holds: the switches between two hosts of a three-tier fat
 * tree (hpcc.MaxHops). */
#define MAX_INT_HOPS 5
/* What a frame costs on the wire beyond its bytes: FCS, preamble and
 * start delimiter, inter-frame gap. */
const bit<32> WIRE_EXTRA = 24;

typedef bit<9>  port_t;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* 802.1Qbb: opcode, class-enable vector (one bit per priority), and a
 * pause time per priority in quanta of 512 bit times; 0 resumes. */
header pfc_t {
    bit<16> opcode;
    bit<8>  reserved;
    bit<8>  class_enable;
    bit<16> time0;
    bit<16> time1;
    bit<16> time2;
    bit<16> time3;
    bit<16> time4;
    bit<16> time5;
    bit<16> time6;
    bit<16> time7;
}

/* IPv4 with the ToS byte split into DSCP and ECN. */
header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* InfiniBand base transport header, as RoCEv2 carries it (12 bytes). */
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited;
    bit<1>  mig_req;
    bit<2>  pad_count;
    bit<4>  version;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  reserved1;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<7>  reserved2;
    bit<24> psn;
}

/* RCM congestion notification (4 bytes), then n_flows 5-tuples: the
 * sender's quantised regional degree F_b' (0 clears the receiver's remote
 * congestion flag) and the harmful flows. */
header rcm_cn_t {
    bit<4> version;
    bit<4> reserved1;
    bit<8> fb;
    bit<8> n_flows;
    bit<8> reserved2;
}

header rcm_flow_t {
    bit<32> src_addr;
    bit<32> dst_addr;
    bit<16> src_port;
    bit<16> dst_port;
    bit<8>  protocol;
}

/* INT's header (4 bytes) after a data packet's BTH: the hop records
 * that follow (hop_count of them, the last switch's first), how many more
 * the stack may take (the sender sets it, at most MAX_INT_HOPS), and
 * whether a switch found no room for its own (exceeded). */
header int_shim_t {
    bit<4> version;
    bit<1> exceeded;
    bit<3> reserved1;
    bit<8> hop_count;
    bit<8> remaining;
    bit<8> reserved2;
}

/* One switch's telemetry, written as the packet left its egress port:
 * when (ns, the low 32 bits of the switch's clock), the bytes the port had
 * sent before it (on the wire, every frame, modulo 2^32), the bytes queued
 * at the port behind it, and the port's rate as the controller set it
 * (kb/s). */
header int_hop_t {
    bit<32> ts_ns;
    bit<32> tx_bytes;
    bit<32> qlen_bytes;
    bit<32> rate_kbps;
}

struct headers_t {
    ethernet_t               ethernet;
    pfc_t                    pfc;
    rcm_cn_t                 rcm_cn;
    rcm_flow_t[MAX_CN_FLOWS] rcm_flows;
    ipv4_t                   ipv4;
    udp_t                    udp;
    bth_t                    bth;
    int_shim_t               int_shim;
    int_hop_t[MAX_INT_HOPS]  int_hops;
}

#endif
