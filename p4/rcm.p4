/* p4rcm's switch program for BMv2's v1model. It mirrors the Go switch
 * model (dataplane): IPv4 forwarding with ECMP, RED/ECN and WRED marking
 * at egress, PFC emulated with PAUSE frames the program builds itself,
 * RCM: congestion region detection (CRD), a CAM of flow IDs per port
 * (CFR), CNs between neighbours, windowed pacing of harmful flows (RCC)
 * and adaptive routing around a congested region (SAR); and HPCC's
 * in-band telemetry (INT), a record per hop pushed into the data packets
 * that ask for it. The tables, registers and counters are described in
 * p4/README.md. */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"

/* What a clone of a packet is to become in egress (0: nothing). */
const bit<2> EMIT_PAUSE = 1; /* PFC PAUSE with the port's quanta */
const bit<2> EMIT_XON   = 2; /* PFC PAUSE with quanta 0 */
const bit<2> EMIT_CN    = 3; /* RCM congestion notification */

/* Field lists preserved with clones and recirculated packets. */
#define FL_CLONE 1
#define FL_HELD  2

/* v1model's instance types (BMv2's simple_switch). */
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE = 2;
const bit<32> INSTANCE_RECIRC       = 4;

struct metadata_t {
    bit<8>  cn_left;     /* CN flows the parser still has to read */
    bit<3>  pfc_class;   /* the packet's 802.1p priority: DSCP >> 3 (0 if not IPv4) */
    bool    forwarded;   /* ingress chose an egress port */
    bool    ecmp;        /* the route is an ECMP group */
    bit<16> ecmp_base;   /* the group's first ecmp_member entry */
    bit<16> ecmp_offset; /* the member the hash (or SAR) picked */
    bit<32> flow_id;     /* CRC32 of the 5-tuple */
    bit<16> l4_src;
    bit<16> l4_dst;
    bit<64> now_ns;      /* BMv2's clock is in microseconds */

    /* ingress_port_config */
    bool    pfc_on;
    bit<32> xoff_bytes;
    @field_list(FL_HELD)
    bit<32> xon_bytes;
    bit<16> pause_quanta;
    bit<32> quantum_ns;
    bit<1>  cn_on;
    bit<32> cn_interval_ns;
    bit<32> cn_ingress_bytes;
    bit<32> cn_hold_ns;

    /* rcm_config, for the egress port */
    @field_list(FL_HELD)
    bool    rcm_on;
    bit<16> sample_every;
    bit<32> qeq_bytes;
    bit<8>  wq_shift;
    bit<8>  fb_shift;
    bit<8>  cam_min_hits;
    @field_list(FL_HELD)
    bit<32> window_bytes;
    @field_list(FL_HELD)
    bit<32> window_ns;   /* W at the port's rate; 0: RCC work-conserving */
    bit<3>  high_priority;
    bit<3>  low_priority;

    /* sar_group */
    bit<8>  sar_members;
    bit<32> sar_pin_idle_ns;
    port_t  sar_p0;
    port_t  sar_p1;
    port_t  sar_p2;
    port_t  sar_p3;

    /* A port's RCM state, as port_state() reads it. */
    bool    in_rcc;      /* congested here or told so by a CN */
    bit<8>  degree;      /* (F_b + F_br) / 2, eq. 2 with w = 1/2 */
    bool    edge;        /* CNs named flows lately: an edge or inner point */
    bool    remote;      /* a CN's degree still holds */

    /* The CAM of one port, as cam_read() leaves it. */
    bit<32> cam0;
    bit<32> cam1;
    bit<32> cam2;
    bit<32> cam3;
    bit<32> cam4;
    bit<32> cam5;
    bit<32> cam6;
    bit<32> cam7;
    bit<8>  cam_hits;    /* entries equal to flow_id */
    bool    harmful;     /* the flow is harmful at the port harm_state() read */
    bool    contributor; /* ... or loads it enough for a CN to name it */

    /* Carried by clones. */
    @field_list(FL_CLONE)
    bit<2>  emit;
    @field_list(FL_CLONE)
    bit<8>  cn_fb;
    @field_list(FL_CLONE)
    bit<16> emit_quanta;
    @field_list(FL_CLONE, FL_HELD)
    bit<3>  pfc_priority;
    @field_list(FL_CLONE, FL_HELD)
    bit<48> port_mac;

    /* Carried by packets held for a paused port. */
    @field_list(FL_HELD)
    port_t  in_port;     /* whose ingress account holds the packet */
    @field_list(FL_HELD)
    port_t  held_port;
    @field_list(FL_HELD)
    bool    low;         /* sent to the low-priority queue */
    @field_list(FL_HELD)
    bit<32> flow_slot;   /* its flow's slot in the per-flow registers */
    @field_list(FL_HELD)
    bit<3>  queue_prio;  /* the egress queue ingress chose */
    @field_list(FL_HELD)
    bool    ticketed;    /* held once: leaves when its ticket is served */
    @field_list(FL_HELD)
    bit<32> ticket;
    @field_list(FL_HELD)
    bool    lim_ticketed; /* waited at egress: leaves in lim_ticket order */
    @field_list(FL_HELD)
    bit<32> lim_ticket;
    @field_list(FL_HELD)
    bool    lim_charged; /* harmful where RCC limits: needs the port's credit */
    @field_list(FL_HELD)
    bit<32> before;      /* packets its flow put in the other RCC queue before it */
    bool    lim_ok;      /* LIM_TAKE: the rate limit let the packet go */

    /* INT, as the parser leaves it. */
    bit<8>  int_left;      /* hop records still to read */
    bool    int_malformed; /* another version, or more than MAX_INT_HOPS */
}

/* The 5-tuple hashed into a flow ID; a CN's flow entries hash the same
 * fields in the same order. */
#define FLOW_ID(id_out, src, dst, sport, dport, proto) \
    hash(id_out, HashAlgorithm.crc32, (bit<32>)0, { src, dst, sport, dport, proto }, (bit<64>)0x100000000)

#include "include/parser.p4"

/* Ports BMv2 may number, with the CPU port (255) among them. */
#define NUM_PORTS 512
/* CAM entries per port (CFR). */
#define CAM_DEPTH 8
/* Flow slots for SAR's pins (indexed by the flow ID's low bits). */
#define PIN_SLOTS 1024

/* Each egress queue's occupancy in bytes: BMv2's queue depths count
 * packets. A packet adds its length when it is sent to a port and takes
 * it away when it leaves; ingress and egress share the register. */
register<bit<32>>(NUM_PORTS) queue_bytes;
/* PFC: each ingress port's account, the bytes in the switch that came
 * in on it; whether it has sent XOFF, and when; until when each priority
 * of each port is paused by its neighbour (ns, 0: not paused), at
 * port * 8 + priority. */
register<bit<32>>(NUM_PORTS) ingress_bytes;
register<bit<1>>(NUM_PORTS) xoff_sent;
register<bit<64>>(NUM_PORTS) xoff_sent_ns;
register<bit<64>>(NUM_PORTS * 8) paused_until_ns;
/* Packets held for a pause leave in the order they were held, as from
 * a paused FIFO: per port, PFC priority and RCC queue (port * 16 +
 * priority * 2, + 1 for the low queue), the next ticket to give, the
 * ticket that leaves next, and when that last changed (ns). */
register<bit<32>>(NUM_PORTS * 16) hold_next;
register<bit<32>>(NUM_PORTS * 16) hold_serve;
register<bit<64>>(NUM_PORTS * 16) hold_moved_ns;
/* Per-flow state is kept in FLOW_SLOTS slots, by the flow ID's low
 * bits. */
#define FLOW_SLOTS 1024
/* How long a held queue waits for its next ticket, pauses aside, before
 * it gives up on it (lost on the way round: the recirculation queue was
 * full) and lets the next packet that comes round leave: 1 s, longer
 * than 1,024 held packets (a full recirculation queue) take to go round
 * at the rates BMv2 and the emulations pace them, so that a slow trip is
 * never taken for a loss (which would reorder the queue). */
#define HOLD_SKIP_NS 1000000000
/* RCM, per port: CRD's sample counter, last sampled queue and quantised
 * F_b; the F_br a CN brought and until when it holds; the CAM and its
 * write pointer; RCC's window counters and the bytes in the low queue;
 * when the port may next send a CN upstream. */
register<bit<16>>(NUM_PORTS) sample_count;
register<bit<32>>(NUM_PORTS) q_last;
register<bit<8>>(NUM_PORTS) fb_local;
register<bit<8>>(NUM_PORTS) fb_remote;
register<bit<64>>(NUM_PORTS) remote_until_ns;
register<bit<32>>(NUM_PORTS * CAM_DEPTH) cam;
register<bit<8>>(NUM_PORTS) cam_ptr;
/* The flows CNs from downstream named on each port (CAM_DEPTH of them,
 * written cyclically) and until when the last naming CN holds: while it
 * does, the port is an edge or inner point of a congestion region, and
 * these flows, the root's, are its harmful ones, not what its own CAM
 * sampled (which holds victims too). */
register<bit<32>>(NUM_PORTS * CAM_DEPTH) named;
register<bit<8>>(NUM_PORTS) named_ptr;
register<bit<64>>(NUM_PORTS) named_until_ns;
/* RCC's W_c per port, as the share of W cut off in 1/1024ths (0: W_c =
 * W). A naming CN cuts W_c by its degree, W_c (1 - F G_d), down to W/16;
 * a root's own congestion cuts it the same way at each sample; once
 * the congestion is gone W_c recovers half way to W at each sample. */
register<bit<16>>(NUM_PORTS) wc_cut;
register<bit<32>>(NUM_PORTS) window_sent;
register<bit<32>>(NUM_PORTS) window_harmful;
register<bit<32>>(NUM_PORTS) low_bytes;
/* Bytes of the harmful packets RCC's rate limit holds back at each port
 * (charged, in the high queue, going round until there is credit). */
register<bit<32>>(NUM_PORTS) limit_bytes;
/* Per flow slot and RCC queue (slot * 2, + 1 for the low queue): the
 * packets the flow put in the queue and how many of them have left. A
 * packet leaves only once its flow's packets that went to the other
 * queue before it have (it goes round meanwhile), so that a flow that
 * moves between the queues (harmful, then not) stays in order. */
register<bit<32>>(FLOW_SLOTS * 2) flow_in;
register<bit<32>>(FLOW_SLOTS * 2) flow_out;
/* When a flow's packets in a queue last showed life (one came, left, or
 * was held): a packet waits for its flow's older ones in the other queue
 * as long as they take (a low queue behind a busy high one may take
 * seconds), but once that queue is empty and they have shown none for
 * HOLD_SKIP_NS one is taken for lost and it goes. */
register<bit<64>>(FLOW_SLOTS * 2) flow_seen_ns;
/* RCC's rate limit at an edge or inner point (set_rcm's window_ns not
 * 0): per port, the bytes harmful packets may still send (at most W, and
 * one packet more once any is left), topped up by W_c every window_ns
 * from lim_start_ns. */
register<bit<32>>(NUM_PORTS) lim_credit;
register<bit<64>>(NUM_PORTS) lim_start_ns;
/* Packets that must wait at egress (the rate limit, or a flow's older
 * packets in its other queue) leave in the order they came, per flow
 * slot and queue as flow_in: as for pauses, the next ticket to give and
 * the ticket that leaves next; and how many times a later ticket came
 * round since the next one last did. One flow never waits for another.
 * A ticket is taken for lost by rounds, not time: the low queue may be
 * served not at all for as long as the high one is busy, and its next
 * ticket then need not be the first to come round afterwards. */
register<bit<32>>(FLOW_SLOTS * 2) lim_next;
register<bit<32>>(FLOW_SLOTS * 2) lim_serve;
register<bit<32>>(FLOW_SLOTS * 2) lim_rounds;
register<bit<64>>(NUM_PORTS) cn_next_ns;
/* Whether a naming CN went out of the port since its account last fell
 * to cn_ingress_bytes: then a CN of degree 0 tells the neighbour the
 * congestion is gone. */
register<bit<1>>(NUM_PORTS) cn_raised;
/* SAR: when a flow slot last saw a packet, and the member it is pinned
 * to (offset + 1; 0: the hash's). */
register<bit<64>>(PIN_SLOTS) pin_seen_ns;
register<bit<8>>(PIN_SLOTS) pin_member;
/* INT: the bytes each port has sent, on the wire (every frame, its
 * length, at least a minimum frame's, plus WIRE_EXTRA), modulo 2^32; a
 * hop record carries the count before its packet. Counted on the ports
 * int_config names. */
register<bit<32>>(NUM_PORTS) int_tx_bytes;

/* W_c in bytes: W less the share wc_cut cut off. */
bit<32> wc_of(in bit<32> w, in bit<16> cut) {
    return w - (bit<32>)(((bit<64>)w * (bit<64>)cut) >> 10);
}

/* RCC's rate limit on port p: whether a harmful packet of len bytes may
 * go at now (meta.lim_ok), taking its bytes from the port's credit if
 * so. Each window_ns adds W_c to the credit, up to W; a packet goes while
 * any credit is left, so that a W_c below a frame still lets one frame
 * through a window, as the model's window does. The credit is topped up
 * when a packet asks, one window at a time while packets keep asking (the
 * windows stay aligned), twice W_c after a longer lull. */
#define LIM_TAKE(p, len, now) \
        { \
            bit<16> lim_cut; \
            wc_cut.read(lim_cut, (bit<32>)(p)); \
            bit<64> lim_wc = (bit<64>)wc_of(meta.window_bytes, lim_cut); \
            bit<32> lim_c; \
            bit<64> lim_at; \
            lim_credit.read(lim_c, (bit<32>)(p)); \
            lim_start_ns.read(lim_at, (bit<32>)(p)); \
            bit<64> lim_win = (bit<64>)meta.window_ns; \
            bit<64> lim_credit64 = (bit<64>)lim_c; \
            if ((now) - lim_at >= lim_win + lim_win) { \
                lim_credit64 = lim_credit64 + lim_wc + lim_wc; \
                lim_at = (now); \
            } else if ((now) - lim_at >= lim_win) { \
                lim_credit64 = lim_credit64 + lim_wc; \
                lim_at = lim_at + lim_win; \
            } \
            if (lim_credit64 > (bit<64>)meta.window_bytes) { \
                lim_credit64 = (bit<64>)meta.window_bytes; \
            } \
            lim_c = (bit<32>)lim_credit64; \
            meta.lim_ok = lim_c != 0; \
            if (meta.lim_ok) { \
                lim_c = lim_c > (len) ? lim_c - (len) : 0; \
            } \
            lim_credit.write((bit<32>)(p), lim_c); \
            lim_start_ns.write((bit<32>)(p), lim_at); \
        }

/* A port's CAM, sent to the controller when it changes. */
struct cam_digest_t {
    port_t  port;
    bit<32> entry0;
    bit<32> entry1;
    bit<32> entry2;
    bit<32> entry3;
    bit<32> entry4;
    bit<32> entry5;
    bit<32> entry6;
    bit<32> entry7;
}

/* The flows CNs named on a port, sent to the controller after each
 * naming CN. */
struct named_digest_t {
    port_t  port;
    bit<32> entry0;
    bit<32> entry1;
    bit<32> entry2;
    bit<32> entry3;
    bit<32> entry4;
    bit<32> entry5;
    bit<32> entry6;
    bit<32> entry7;
}

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
    counter(NUM_PORTS, CounterType.packets) pauses_received;
    counter(NUM_PORTS, CounterType.packets) resumes_received;
    counter(NUM_PORTS, CounterType.packets) cns_sent;
    counter(NUM_PORTS, CounterType.packets) clear_cns_sent;
    counter(NUM_PORTS, CounterType.packets) cns_received;
    counter(NUM_PORTS, CounterType.packets) cam_hits;
    counter(NUM_PORTS, CounterType.packets) detours;
    counter(NUM_PORTS, CounterType.packets) window_holds;
    counter(NUM_PORTS, CounterType.packets) int_malformed;

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
        hash(meta.ecmp_offset, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src, meta.l4_dst },
             size);
        meta.ecmp_base = base;
        meta.ecmp = true;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { set_nexthop; set_ecmp_group; drop; }
        default_action = drop();
        size = 1024;
    }

    table ecmp_member {
        key = { meta.ecmp_base: exact; meta.ecmp_offset: exact; }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 4096;
    }

    /* PFC and CNs for the port a packet came in on. xoff_bytes 0 turns
     * PFC off on the port. A PAUSE sent pauses the neighbour for
     * pause_quanta quanta; a quantum lasts quantum_ns on this port's
     * link (512 bit times), which also times PAUSEs received. PFC
     * protects priority pfc_priority. CNs go out of the port when
     * cn_enabled (its neighbour is a switch), at most every
     * cn_interval_ns, and only while the port's account exceeds
     * cn_ingress_bytes (its input queue backs up). A CN received here
     * holds for cn_hold_ns. mac is the port's own address. */
    action set_port(bit<48> mac, bit<32> xoff_bytes, bit<32> xon_bytes,
                    bit<16> pause_quanta, bit<32> quantum_ns, bit<3> pfc_priority,
                    bit<1> cn_enabled, bit<32> cn_interval_ns,
                    bit<32> cn_ingress_bytes, bit<32> cn_hold_ns) {
        meta.port_mac = mac;
        meta.pfc_on = xoff_bytes != 0;
        meta.xoff_bytes = xoff_bytes;
        meta.xon_bytes = xon_bytes;
        meta.pause_quanta = pause_quanta;
        meta.quantum_ns = quantum_ns;
        meta.pfc_priority = pfc_priority;
        meta.cn_on = cn_enabled;
        meta.cn_interval_ns = cn_interval_ns;
        meta.cn_ingress_bytes = cn_ingress_bytes;
        meta.cn_hold_ns = cn_hold_ns;
    }

    table ingress_port_config {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    /* RCM on an egress port. Every sample_every-th packet to the port is
     * a sample: CRD computes F_b = (Q - Q_eq) + 2^wq_shift (Q - Q_last)
     * from its bytes and quantises it to 1..63 as F_b >> fb_shift, and
     * while the port is in RCC the sample's flow goes into the CAM. A
     * flow with cam_min_hits entries is harmful. Harmful packets past
     * W_c in a window of window_bytes go to queue low_priority, all else
     * to high_priority (both 0 without --priority-queues). window_ns is
     * W at the port's rate: where CNs named the harmful flows (an edge or
     * inner point) they take at most W_c every window_ns, held back even
     * when the link would idle. 0 leaves RCC work-conserving everywhere:
     * the low queue goes whenever the high one is empty. */
    action set_rcm(bit<16> sample_every, bit<32> qeq_bytes, bit<8> wq_shift,
                   bit<8> fb_shift, bit<8> cam_min_hits, bit<32> window_bytes,
                   bit<32> window_ns, bit<3> high_priority, bit<3> low_priority) {
        meta.rcm_on = true;
        meta.sample_every = sample_every;
        meta.qeq_bytes = qeq_bytes;
        meta.wq_shift = wq_shift;
        meta.fb_shift = fb_shift;
        meta.cam_min_hits = cam_min_hits;
        meta.window_bytes = window_bytes;
        meta.window_ns = window_ns;
        meta.high_priority = high_priority;
        meta.low_priority = low_priority;
    }

    table rcm_config {
        key = { standard_metadata.egress_spec: exact; }
        actions = { set_rcm; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    /* SAR over an ECMP group: its members' ports (up to four, in member
     * order) and how long a detoured flow stays pinned after its last
     * packet. */
    action set_sar_members(bit<8> members, port_t p0, port_t p1, port_t p2, port_t p3,
                           bit<32> pin_idle_ns) {
        meta.sar_members = members;
        meta.sar_p0 = p0;
        meta.sar_p1 = p1;
        meta.sar_p2 = p2;
        meta.sar_p3 = p3;
        meta.sar_pin_idle_ns = pin_idle_ns;
    }

    table sar_group {
        key = { meta.ecmp_base: exact; }
        actions = { set_sar_members; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* Whether port p is in RCC (congested, or told so by a CN that
     * still holds) and its regional degree, (F_b + F_br) / 2. */
    action port_state(port_t p) {
        bit<8> local;
        bit<8> remote;
        bit<64> until;
        fb_local.read(local, (bit<32>)p);
        fb_remote.read(remote, (bit<32>)p);
        remote_until_ns.read(until, (bit<32>)p);
        if (until <= meta.now_ns) {
            remote = 0;
        }
        meta.in_rcc = local != 0 || remote != 0;
        meta.remote = remote != 0;
        meta.degree = (bit<8>)(((bit<9>)local + (bit<9>)remote) >> 1);
    }

    /* Reads CAM_DEPTH entries of register reg from port p's and counts
     * those equal to flow_id. */
#define CAM_COUNT(reg, p) \
        bit<32> at = (bit<32>)p * CAM_DEPTH; \
        reg.read(meta.cam0, at); \
        reg.read(meta.cam1, at + 1); \
        reg.read(meta.cam2, at + 2); \
        reg.read(meta.cam3, at + 3); \
        reg.read(meta.cam4, at + 4); \
        reg.read(meta.cam5, at + 5); \
        reg.read(meta.cam6, at + 6); \
        reg.read(meta.cam7, at + 7); \
        meta.cam_hits = (meta.cam0 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam1 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam2 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam3 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam4 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam5 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam6 == meta.flow_id ? 8w1 : 8w0) \
                      + (meta.cam7 == meta.flow_id ? 8w1 : 8w0);

    /* Port p's own CAM, what it sampled. */
    action cam_read(port_t p) {
        CAM_COUNT(cam, p)
    }

    /* The flows CNs named on port p. */
    action named_read(port_t p) {
        CAM_COUNT(named, p)
    }

    /* Whether this packet's flow is harmful at port p (meta.harmful) or
     * a contributor to its congestion (meta.contributor), and p's state
     * (port_state, meta.edge). At an edge or inner point both are the
     * flows the CNs named. At a root in RCC, a contributor has min_hits
     * entries of its own CAM, and a harmful flow is a heavy hitter among
     * them: more entries than twice the mean of the other flows' (with
     * n entries written and f flows, h (f - 1) > 2 (n - h)), as the
     * model's CFR has it. A root holds back heavy hitters only (flows
     * sharing its link evenly are not to blame for one another) and
     * names contributors upstream, where slowing them spares the flows
     * that do not go to the root. meta.cam_hits is left counting the
     * CAM that decided. */
    action harm_state(port_t p, bit<8> min_hits) {
        port_state(p);
        bit<64> until;
        named_until_ns.read(until, (bit<32>)p);
        meta.edge = until > meta.now_ns;
        if (meta.edge) {
            named_read(p);
            meta.harmful = meta.cam_hits != 0;
            meta.contributor = meta.harmful;
        } else {
            cam_read(p);
            meta.contributor = meta.in_rcc && meta.cam_hits >= min_hits && meta.cam_hits != 0;
            /* Only a contributor can be a heavy hitter: the flows are
             * counted for it alone, not for every packet. */
            meta.harmful = false;
            if (meta.contributor) {
                /* Entries written (0: never) and the flows among them. */
                bit<8> n = (meta.cam0 != 0 ? 8w1 : 8w0) + (meta.cam1 != 0 ? 8w1 : 8w0)
                         + (meta.cam2 != 0 ? 8w1 : 8w0) + (meta.cam3 != 0 ? 8w1 : 8w0)
                         + (meta.cam4 != 0 ? 8w1 : 8w0) + (meta.cam5 != 0 ? 8w1 : 8w0)
                         + (meta.cam6 != 0 ? 8w1 : 8w0) + (meta.cam7 != 0 ? 8w1 : 8w0);
                bit<8> flows = (meta.cam0 != 0 ? 8w1 : 8w0)
                    + (meta.cam1 != 0 && meta.cam1 != meta.cam0 ? 8w1 : 8w0)
                    + (meta.cam2 != 0 && meta.cam2 != meta.cam0 && meta.cam2 != meta.cam1 ? 8w1 : 8w0)
                    + (meta.cam3 != 0 && meta.cam3 != meta.cam0 && meta.cam3 != meta.cam1
                       && meta.cam3 != meta.cam2 ? 8w1 : 8w0)
                    + (meta.cam4 != 0 && meta.cam4 != meta.cam0 && meta.cam4 != meta.cam1
                       && meta.cam4 != meta.cam2 && meta.cam4 != meta.cam3 ? 8w1 : 8w0)
                    + (meta.cam5 != 0 && meta.cam5 != meta.cam0 && meta.cam5 != meta.cam1
                       && meta.cam5 != meta.cam2 && meta.cam5 != meta.cam3 && meta.cam5 != meta.cam4 ? 8w1 : 8w0)
                    + (meta.cam6 != 0 && meta.cam6 != meta.cam0 && meta.cam6 != meta.cam1
                       && meta.cam6 != meta.cam2 && meta.cam6 != meta.cam3 && meta.cam6 != meta.cam4
                       && meta.cam6 != meta.cam5 ? 8w1 : 8w0)
                    + (meta.cam7 != 0 && meta.cam7 != meta.cam0 && meta.cam7 != meta.cam1
                       && meta.cam7 != meta.cam2 && meta.cam7 != meta.cam3 && meta.cam7 != meta.cam4
                       && meta.cam7 != meta.cam5 && meta.cam7 != meta.cam6 ? 8w1 : 8w0);
                meta.harmful = flows >= 2 &&
                               meta.cam_hits * (flows - 1) > (n - meta.cam_hits) << 1;
            }
        }
    }

    /* Cuts port p's W_c by degree fb: W_c (1 - fb / 128), W/16 at least. */
    action wc_cut_by(port_t p, bit<8> fb) {
        bit<16> cut;
        wc_cut.read(cut, (bit<32>)p);
        bit<16> left = 1024 - cut;
        left = left - (bit<16>)(((bit<32>)left * (bit<32>)fb) >> 7);
        if (left < 64) {
            left = 64;
        }
        wc_cut.write((bit<32>)p, 1024 - left);
    }

    /* Writes id into port p's CAM at its cyclic write pointer. */
    action cam_write(port_t p, bit<32> id) {
        bit<8> ptr;
        cam_ptr.read(ptr, (bit<32>)p);
        cam.write((bit<32>)p * CAM_DEPTH + (bit<32>)ptr, id);
        cam_ptr.write((bit<32>)p, (ptr + 1) & (CAM_DEPTH - 1));
    }

    /* Tells the controller what port p's CAM holds now. */
    action cam_report(port_t p) {
        cam_read(p);
        digest<cam_digest_t>(1, { p, meta.cam0, meta.cam1, meta.cam2, meta.cam3,
                                  meta.cam4, meta.cam5, meta.cam6, meta.cam7 });
    }

    /* Tells the controller which flows CNs named on port p. */
    action named_report(port_t p) {
        named_read(p);
        digest<named_digest_t>(1, { p, meta.cam0, meta.cam1, meta.cam2, meta.cam3,
                                    meta.cam4, meta.cam5, meta.cam6, meta.cam7 });
    }

    /* A clone of this packet goes back out of the port it came in on,
     * to become a PAUSE or a CN in egress. Clone session p + 1 must send
     * to port p (the controller sets one up per port). */
    action emit_upstream(bit<2> what) {
        meta.emit = what;
        clone_preserving_field_list(CloneType.I2E,
            (bit<32>)standard_metadata.ingress_port + 1, FL_CLONE);
    }

    /* An 802.1Qbb PAUSE from the neighbour: each priority whose
     * class-enable bit is set stops for the quanta given, or resumes on
     * 0; the others are left as they are. */
#define TAKE_PAUSE(i, quanta) \
        if (hdr.pfc.class_enable[i:i] == 1) { \
            paused_until_ns.write(at + i, quanta == 0 ? 64w0 : \
                meta.now_ns + (bit<64>)quanta * (bit<64>)meta.quantum_ns); \
        }
#define RESUMES(i, quanta) (hdr.pfc.class_enable[i:i] == 0 || quanta == 0)
    action take_pause() {
        bit<32> at = (bit<32>)standard_metadata.ingress_port * 8;
        TAKE_PAUSE(0, hdr.pfc.time0)
        TAKE_PAUSE(1, hdr.pfc.time1)
        TAKE_PAUSE(2, hdr.pfc.time2)
        TAKE_PAUSE(3, hdr.pfc.time3)
        TAKE_PAUSE(4, hdr.pfc.time4)
        TAKE_PAUSE(5, hdr.pfc.time5)
        TAKE_PAUSE(6, hdr.pfc.time6)
        TAKE_PAUSE(7, hdr.pfc.time7)
        /* A frame that gives every class it names a time of 0 is a
         * RESUME (XON); the model and the hosts' agents count the two
         * kinds apart, and so does the switch. */
        if (RESUMES(0, hdr.pfc.time0) && RESUMES(1, hdr.pfc.time1) &&
            RESUMES(2, hdr.pfc.time2) && RESUMES(3, hdr.pfc.time3) &&
            RESUMES(4, hdr.pfc.time4) && RESUMES(5, hdr.pfc.time5) &&
            RESUMES(6, hdr.pfc.time6) && RESUMES(7, hdr.pfc.time7)) {
            resumes_received.count((bit<32>)standard_metadata.ingress_port);
        } else {
            pauses_received.count((bit<32>)standard_metadata.ingress_port);
        }
    }

    /* A CN from the downstream neighbour on this port: its F_b' and
     * flows. Degree 0 ends the remote congestion at once. */
    action take_cn() {
        bit<32> p = (bit<32>)standard_metadata.ingress_port;
        remote_until_ns.write(p, hdr.rcm_cn.fb == 0 ? 64w0 : meta.now_ns + (bit<64>)meta.cn_hold_ns);
        fb_remote.write(p, hdr.rcm_cn.fb);
        cns_received.count(p);
    }

    /* A naming CN (degree above 0) makes the port an edge or inner
     * point for cn_hold_ns and cuts its W_c; its flows join the named
     * ones. A clearing CN (degree 0) leaves both: W_c recovers from the
     * next samples, and the named flows stay harmful until they expire,
     * so that what was held back does not hit the root at once. */
    action take_naming_cn() {
        named_until_ns.write((bit<32>)standard_metadata.ingress_port,
                             meta.now_ns + (bit<64>)meta.cn_hold_ns);
        wc_cut_by(standard_metadata.ingress_port, hdr.rcm_cn.fb);
    }

    /* Writes id among port p's named flows. */
    action named_write(port_t p, bit<32> id) {
        bit<8> ptr;
        named_ptr.read(ptr, (bit<32>)p);
        named.write((bit<32>)p * CAM_DEPTH + (bit<32>)ptr, id);
        named_ptr.write((bit<32>)p, (ptr + 1) & (CAM_DEPTH - 1));
    }

#define TAKE_CN_FLOW(i) \
        if (hdr.rcm_flows[i].isValid()) { \
            bit<32> id; \
            FLOW_ID(id, hdr.rcm_flows[i].src_addr, hdr.rcm_flows[i].dst_addr, \
                    hdr.rcm_flows[i].src_port, hdr.rcm_flows[i].dst_port, \
                    hdr.rcm_flows[i].protocol); \
            named_write(standard_metadata.ingress_port, id); \
        }

    apply {
        meta.now_ns = (bit<64>)standard_metadata.ingress_global_timestamp * 1000;

        /* A packet held (for a pause, for RCC's rate limit, or behind
         * its flow's older packets in the other queue) comes back here:
         * it goes to the same port and queue again, already routed, so
         * that strict priority still orders the queues; egress keeps
         * each queue's held packets, and each flow, in order. A held
         * packet never left its queue's byte counts. */
        if (standard_metadata.instance_type == INSTANCE_RECIRC) {
            standard_metadata.egress_spec = meta.held_port;
            standard_metadata.priority = meta.queue_prio;
            return;
        }

        rx_frames.count((bit<32>)standard_metadata.ingress_port);
        ingress_port_config.apply();
        meta.in_port = standard_metadata.ingress_port;

        /* MAC control and CNs end here. */
        if (hdr.pfc.isValid()) {
            if (hdr.pfc.opcode == PFC_OPCODE) {
                take_pause();
            }
            drop();
            return;
        }
        if (hdr.rcm_cn.isValid()) {
            @atomic {
                take_cn();
                if (hdr.rcm_cn.fb != 0) {
                    take_naming_cn();
                    TAKE_CN_FLOW(0)
                    TAKE_CN_FLOW(1)
                    TAKE_CN_FLOW(2)
                    TAKE_CN_FLOW(3)
                    TAKE_CN_FLOW(4)
                    TAKE_CN_FLOW(5)
                    TAKE_CN_FLOW(6)
                    TAKE_CN_FLOW(7)
                    named_report(standard_metadata.ingress_port);
                }
            }
            drop();
            return;
        }

        /* INT no switch can account for: a stack of another version, of
         * more than MAX_INT_HOPS hops, or one the frame ends inside. A
         * hop pushed onto it would be read against the wrong hops (or
         * the payload), so the packet goes no further; the sender's
         * go-back-N recovers it as any loss. */
        if (meta.int_malformed ||
            (hdr.bth.isValid() && hdr.ipv4.dscp[0:0] == 1 &&
             standard_metadata.parser_error != error.NoError)) {
            int_malformed.count((bit<32>)standard_metadata.ingress_port);
            drop();
            return;
        }

        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        if (hdr.udp.isValid()) {
            meta.l4_src = hdr.udp.src_port;
            meta.l4_dst = hdr.udp.dst_port;
        }
        FLOW_ID(meta.flow_id, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                meta.l4_src, meta.l4_dst, hdr.ipv4.protocol);
        meta.flow_slot = meta.flow_id & (FLOW_SLOTS - 1);

        if (!ipv4_lpm.apply().hit) {
            no_route.count((bit<32>)standard_metadata.ingress_port);
            return;
        }
        if (meta.ecmp) {
            /* SAR: a new flow whose hashed port is in a congested region,
             * and which is not harmful there, takes the member with the
             * lowest regional degree and is pinned to it. Flows already
             * under way keep their path, so they are not reordered. */
            if (sar_group.apply().hit && meta.sar_members != 0) {
                bit<32> slot = meta.flow_id & (PIN_SLOTS - 1);
                bit<64> seen;
                bit<8> pinned;
                @atomic {
                    pin_seen_ns.read(seen, slot);
                    pin_member.read(pinned, slot);
                    if (seen != 0 && meta.now_ns - seen < (bit<64>)meta.sar_pin_idle_ns) {
                        if (pinned != 0) {
                            meta.ecmp_offset = (bit<16>)pinned - 1;
                        }
                    } else {
                        port_t hashed = meta.sar_p0;
                        if (meta.ecmp_offset == 1) { hashed = meta.sar_p1; }
                        if (meta.ecmp_offset == 2) { hashed = meta.sar_p2; }
                        if (meta.ecmp_offset == 3) { hashed = meta.sar_p3; }
                        harm_state(hashed, 1);
                        pinned = 0;
                        if (meta.in_rcc && !meta.harmful) {
                            bit<8> best = meta.degree;
                            bit<16> choice = meta.ecmp_offset;
                            port_state(meta.sar_p0);
                            if (meta.degree < best) { best = meta.degree; choice = 0; }
                            if (meta.sar_members > 1) {
                                port_state(meta.sar_p1);
                                if (meta.degree < best) { best = meta.degree; choice = 1; }
                            }
                            if (meta.sar_members > 2) {
                                port_state(meta.sar_p2);
                                if (meta.degree < best) { best = meta.degree; choice = 2; }
                            }
                            if (meta.sar_members > 3) {
                                port_state(meta.sar_p3);
                                if (meta.degree < best) { best = meta.degree; choice = 3; }
                            }
                            if (choice != meta.ecmp_offset) {
                                meta.ecmp_offset = choice;
                                pinned = (bit<8>)choice + 1;
                                detours.count((bit<32>)standard_metadata.ingress_port);
                            }
                        }
                        pin_member.write(slot, pinned);
                    }
                    pin_seen_ns.write(slot, meta.now_ns);
                }
            }
            ecmp_member.apply();
        }
        if (!meta.forwarded) {
            return;
        }
        port_t egress = standard_metadata.egress_spec;
        bit<32> len = standard_metadata.packet_length;

        /* RCM on the egress port: CAM lookup, CRD sample, CFR write, RCC
         * window, CN upstream. */
        bool sampled = false;
        bool harmful = false;
        bool contributor = false;
        bit<32> q;
        @atomic {
            queue_bytes.read(q, (bit<32>)egress);
            queue_bytes.write((bit<32>)egress, q + len);
        }
        if (rcm_config.apply().hit) {
            standard_metadata.priority = meta.high_priority;
            @atomic {
                bit<16> n;
                sample_count.read(n, (bit<32>)egress);
                n = n + 1;
                if (n >= meta.sample_every) {
                    sampled = true;
                    n = 0;
                }
                sample_count.write((bit<32>)egress, n);
                if (sampled) {
                    /* F_b = (Q - Q_eq) + w (Q - Q_last), in unsigned
                     * halves: what raises it against what lowers it. Q
                     * leaves out the harmful packets RCC put in the low
                     * queue or holds to its rate, as the model's
                     * detector leaves out its held ones: a port holding
                     * back the flows CNs named is an edge of the region,
                     * not its root. */
                    bit<32> held_low;
                    bit<32> held_limit;
                    low_bytes.read(held_low, (bit<32>)egress);
                    limit_bytes.read(held_limit, (bit<32>)egress);
                    bit<32> held_back = held_low + held_limit;
                    bit<32> qd = q > held_back ? q - held_back : 0;
                    bit<32> last;
                    q_last.read(last, (bit<32>)egress);
                    q_last.write((bit<32>)egress, qd);
                    bit<32> up = qd;
                    bit<32> down = meta.qeq_bytes;
                    if (qd > last) {
                        up = up + ((qd - last) << meta.wq_shift);
                    } else {
                        down = down + ((last - qd) << meta.wq_shift);
                    }
                    bit<8> fb = 0;
                    if (up > down) {
                        bit<32> quantised = (up - down) >> meta.fb_shift;
                        fb = (bit<8>)quantised;
                        if (quantised > 63) {
                            fb = 63;
                        } else if (quantised == 0) {
                            fb = 1;
                        }
                    }
                    fb_local.write((bit<32>)egress, fb);
                }
            }
            @atomic {
                harm_state(egress, meta.cam_min_hits);
                harmful = meta.harmful;
                contributor = meta.contributor;
                if (harmful) {
                    cam_hits.count((bit<32>)egress);
                }
                /* The port's own CAM samples while it is in RCC: what a
                 * root reads when it names its harmful flows. */
                if (meta.in_rcc && sampled) {
                    cam_write(egress, meta.flow_id);
                    cam_report(egress);
                }
                /* W_c: an edge or inner point follows the CNs (which cut
                 * it as they come) and recovers once their degree no
                 * longer holds; a root cuts it by its own degree at each
                 * sample and recovers once its queue is no longer
                 * congested. */
                if (sampled && !(meta.edge && meta.remote)) {
                    bit<8> local;
                    fb_local.read(local, (bit<32>)egress);
                    if (!meta.edge && local != 0) {
                        wc_cut_by(egress, local);
                    } else {
                        bit<16> cut;
                        wc_cut.read(cut, (bit<32>)egress);
                        wc_cut.write((bit<32>)egress, cut >> 1);
                    }
                }
            }
            if (meta.edge && meta.window_ns != 0) {
                /* RCC as a rate limit: harmful packets stay in the high
                 * queue, and egress lets them out at W_c a window, going
                 * round meanwhile; the other flows pass them. (In the
                 * low queue they would get nothing while the others
                 * fill the link: the model gives them W_c even then.) */
                if (harmful) {
                    meta.lim_charged = true;
                    @atomic {
                        bit<32> held_limit;
                        limit_bytes.read(held_limit, (bit<32>)egress);
                        limit_bytes.write((bit<32>)egress, held_limit + len);
                    }
                }
            } else if (meta.in_rcc || meta.edge) {
                /* RCC: of every window_bytes that reach the port,
                 * harmful packets may take W_c in the high queue; past
                 * it, or while harmful packets wait in the low queue (so
                 * a flow stays in order), they go low. */
                bit<16> cut;
                wc_cut.read(cut, (bit<32>)egress);
                bit<32> wc = wc_of(meta.window_bytes, cut);
                @atomic {
                    bit<32> sent;
                    bit<32> harm;
                    bit<32> waiting;
                    window_sent.read(sent, (bit<32>)egress);
                    window_harmful.read(harm, (bit<32>)egress);
                    low_bytes.read(waiting, (bit<32>)egress);
                    sent = sent + len;
                    if (harmful) {
                        harm = harm + len;
                        if (harm > wc || waiting != 0) {
                            meta.low = true;
                            standard_metadata.priority = meta.low_priority;
                            low_bytes.write((bit<32>)egress, waiting + len);
                            window_holds.count((bit<32>)egress);
                        }
                    }
                    if (sent >= meta.window_bytes) {
                        sent = 0;
                        harm = 0;
                    }
                    window_sent.write((bit<32>)egress, sent);
                    window_harmful.write((bit<32>)egress, harm);
                }
            }
            /* A packet must not pass its flow's older ones in the
             * other queue (a RoCE receiver takes a packet out of order
             * for a loss): egress holds it until they have left. It
             * still goes to its own queue: were the rest of a flow sent
             * low after its harmful packets, a flow no longer harmful
             * would stay behind the harmful ones for as long as the low
             * queue never empties. */
            @atomic {
                bit<32> mine = meta.flow_slot * 2 + (meta.low ? 32w1 : 32w0);
                bit<32> other = meta.flow_slot * 2 + (meta.low ? 32w0 : 32w1);
                bit<32> n;
                flow_in.read(meta.before, other);
                flow_in.read(n, mine);
                flow_in.write(mine, n + 1);
                flow_seen_ns.write(mine, meta.now_ns);
            }
        }

        meta.queue_prio = standard_metadata.priority;

        /* PFC: the packet joins its ingress port's account; past XOFF
         * the port sends PAUSE upstream, again when half the pause has
         * gone by. */
        bit<32> account;
        bool pause = false;
        @atomic {
            ingress_bytes.read(account, (bit<32>)meta.in_port);
            account = account + len;
            ingress_bytes.write((bit<32>)meta.in_port, account);
            if (meta.pfc_on && account > meta.xoff_bytes) {
                bit<1> sent;
                bit<64> at;
                xoff_sent.read(sent, (bit<32>)meta.in_port);
                xoff_sent_ns.read(at, (bit<32>)meta.in_port);
                bit<64> half = ((bit<64>)meta.pause_quanta * (bit<64>)meta.quantum_ns) >> 1;
                if (sent == 0 || meta.now_ns - at > half) {
                    pause = true;
                    xoff_sent.write((bit<32>)meta.in_port, 1);
                    xoff_sent_ns.write((bit<32>)meta.in_port, meta.now_ns);
                }
            }
        }
        if (pause) {
            meta.emit_quanta = meta.pause_quanta;
            emit_upstream(EMIT_PAUSE);
        } else if (sampled && contributor && meta.cn_on == 1 && account > meta.cn_ingress_bytes) {
            /* A CN upstream names this flow and carries the degree. */
            bool send = false;
            @atomic {
                bit<64> next;
                cn_next_ns.read(next, (bit<32>)meta.in_port);
                if (meta.now_ns >= next) {
                    send = true;
                    cn_next_ns.write((bit<32>)meta.in_port, meta.now_ns + (bit<64>)meta.cn_interval_ns);
                    cn_raised.write((bit<32>)meta.in_port, 1);
                }
            }
            if (send) {
                meta.cn_fb = meta.degree == 0 ? 8w1 : meta.degree;
                emit_upstream(EMIT_CN);
                cns_sent.count((bit<32>)meta.in_port);
            }
        } else if (meta.cn_on == 1 && account <= meta.cn_ingress_bytes) {
            /* The input queue that raised CNs has drained: a CN of
             * degree 0 says so, and the neighbour's W_c recovers
             * without waiting for cn_hold_ns. (It names this packet's
             * flow, which the neighbour ignores.) */
            bool clear = false;
            @atomic {
                bit<1> raised;
                cn_raised.read(raised, (bit<32>)meta.in_port);
                if (raised == 1) {
                    clear = true;
                    cn_raised.write((bit<32>)meta.in_port, 0);
                }
            }
            if (clear) {
                meta.cn_fb = 0;
                emit_upstream(EMIT_CN);
                clear_cns_sent.count((bit<32>)meta.in_port);
            }
        }
    }
}

control RcmEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets) ecn_marks;
    counter(NUM_PORTS, CounterType.packets) wred_drops;
    counter(NUM_PORTS, CounterType.packets) buf_max_drops;
    counter(NUM_PORTS, CounterType.packets) held;
    counter(NUM_PORTS, CounterType.packets) limit_holds;
    counter(NUM_PORTS, CounterType.packets) pauses_sent;
    counter(NUM_PORTS, CounterType.packets) resumes_sent;
    counter(NUM_PORTS, CounterType.packets) int_hops;
    counter(NUM_PORTS, CounterType.packets) int_exceeded;

    bit<32> kmin = 0;
    bit<32> kmax = 0;
    bit<32> slope = 0;
    bit<32> wred_k = 0;
    bit<32> buf_max = 0;
    bool red_on = false;

    /* The port's RED/ECN curve: mark ECN-capable packets with a
     * probability rising from 0 at kmin bytes to pmax at kmax, all
     * beyond; slope is pmax * 2^32 / (kmax - kmin), from the controller,
     * since the target has no division. WRED drops packets that are not
     * ECN-capable from wred_k bytes on (LDCP's eq. 3; 0: never).
     * buf_max_bytes caps the queue for priorities without PFC: past it
     * any packet of theirs is dropped (0: no cap), as LDCP's switches
     * do; a lossless priority is PFC's to hold. */
    action set_red(bit<32> kmin_bytes, bit<32> kmax_bytes, bit<32> pmax_slope, bit<32> wred_k_bytes,
                   bit<32> buf_max_bytes) {
        kmin = kmin_bytes;
        kmax = kmax_bytes;
        slope = pmax_slope;
        wred_k = wred_k_bytes;
        buf_max = buf_max_bytes;
        red_on = true;
    }

    bool int_on = false;
    bit<32> int_rate = 0;
    bit<32> int_sent = 0;

    /* INT on an egress port: the port counts the bytes it sends and
     * pushes a hop record into each packet that asks, with its rate as
     * the controller sets it here (kb/s). A port without an entry counts
     * nothing and pushes nothing: packets pass it untouched. */
    action set_int(bit<32> rate_kbps) {
        int_on = true;
        int_rate = rate_kbps;
    }

    table int_config {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_int; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    /* A frame of len bytes leaves a port int_config names: int_sent is
     * what the port had sent before it, on the wire (a frame shorter than
     * the minimum is padded to it). */
#define INT_COUNT(len) \
        { \
            bit<32> wire = ((len) < PFC_FRAME_BYTES ? PFC_FRAME_BYTES : (len)) + WIRE_EXTRA; \
            @atomic { \
                int_tx_bytes.read(int_sent, (bit<32>)standard_metadata.egress_port); \
                int_tx_bytes.write((bit<32>)standard_metadata.egress_port, int_sent + wire); \
            } \
        }

    /* Hides a clone's INT: PAUSEs and CNs carry none. */
    action int_strip() {
        hdr.int_shim.setInvalid();
        hdr.int_hops[0].setInvalid();
        hdr.int_hops[1].setInvalid();
        hdr.int_hops[2].setInvalid();
        hdr.int_hops[3].setInvalid();
        hdr.int_hops[4].setInvalid();
    }

    table red_config {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_red; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    /* Turns a clone into an 802.1Qbb PAUSE for the protected priority:
     * quanta, or 0 to resume. */
    action build_pause(bit<16> quanta) {
        hdr.ethernet.dst_addr = PFC_DST_MAC;
        hdr.ethernet.src_addr = meta.port_mac;
        hdr.ethernet.ether_type = ETHERTYPE_PFC;
        hdr.pfc.setValid();
        hdr.pfc.opcode = PFC_OPCODE;
        hdr.pfc.reserved = 0;
        hdr.pfc.class_enable = (bit<8>)1 << meta.pfc_priority;
        hdr.pfc.time0 = meta.pfc_priority == 0 ? quanta : 0;
        hdr.pfc.time1 = meta.pfc_priority == 1 ? quanta : 0;
        hdr.pfc.time2 = meta.pfc_priority == 2 ? quanta : 0;
        hdr.pfc.time3 = meta.pfc_priority == 3 ? quanta : 0;
        hdr.pfc.time4 = meta.pfc_priority == 4 ? quanta : 0;
        hdr.pfc.time5 = meta.pfc_priority == 5 ? quanta : 0;
        hdr.pfc.time6 = meta.pfc_priority == 6 ? quanta : 0;
        hdr.pfc.time7 = meta.pfc_priority == 7 ? quanta : 0;
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.bth.setInvalid();
        int_strip();
        /* A minimum frame; what follows the PAUSE is the clone's old
         * payload, which receivers ignore. */
        truncate(PFC_FRAME_BYTES);
    }

    /* Turns a clone of a data packet into a CN to the neighbour it came
     * from, naming its flow, with the degree in meta.cn_fb. */
    action build_cn() {
        hdr.rcm_cn.setValid();
        hdr.rcm_cn.version = RCM_CN_VERSION;
        hdr.rcm_cn.reserved1 = 0;
        hdr.rcm_cn.fb = meta.cn_fb;
        hdr.rcm_cn.n_flows = 1;
        hdr.rcm_cn.reserved2 = 0;
        hdr.rcm_flows[0].setValid();
        hdr.rcm_flows[0].src_addr = hdr.ipv4.src_addr;
        hdr.rcm_flows[0].dst_addr = hdr.ipv4.dst_addr;
        hdr.rcm_flows[0].src_port = hdr.udp.isValid() ? hdr.udp.src_port : 0;
        hdr.rcm_flows[0].dst_port = hdr.udp.isValid() ? hdr.udp.dst_port : 0;
        hdr.rcm_flows[0].protocol = hdr.ipv4.protocol;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = meta.port_mac;
        hdr.ethernet.ether_type = ETHERTYPE_RCM_CN;
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.bth.setInvalid();
        int_strip();
        truncate(RCM_CN_BYTES + RCM_FLOW_BYTES);
    }

    apply {
        int_config.apply();
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE ||
            standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            bit<32> built = PFC_FRAME_BYTES;
            if (meta.emit == EMIT_PAUSE) {
                build_pause(meta.emit_quanta);
                pauses_sent.count((bit<32>)standard_metadata.egress_port);
            } else if (meta.emit == EMIT_XON) {
                build_pause(0);
                resumes_sent.count((bit<32>)standard_metadata.egress_port);
            } else if (meta.emit == EMIT_CN) {
                build_cn();
                built = RCM_CN_BYTES + RCM_FLOW_BYTES;
            } else {
                mark_to_drop(standard_metadata);
                return;
            }
            if (int_on) {
                INT_COUNT(built)
            }
            return;
        }

        port_t egress = standard_metadata.egress_port;
        bit<32> len = standard_metadata.packet_length;

        /* PFC: packets of a priority the neighbour paused on this port
         * are held; they go round through the recirculation port until
         * the pause ends. Other priorities pass. A RoCE receiver answers
         * a packet out of order with a NAK and go-back-N, so held
         * packets keep their order, as in a paused FIFO: each takes a
         * ticket for its port, priority and RCC queue the first time it
         * is held; while tickets are out, every packet for them takes
         * one and goes round (back to the same queue), and only the
         * next ticket leaves. Once the pause is over, strict priority
         * orders the queues again (RCC's high one first), and a flow
         * with packets in both is kept in order further on (flow_in).
         * The
         * wait for a ticket counts only unpaused time; past
         * HOLD_SKIP_NS the ticket is taken as lost, the packet that came
         * round leaves, and any older ones leave when they come. */
        bit<64> until;
        paused_until_ns.read(until, (bit<32>)egress * 8 + (bit<32>)meta.pfc_class);
        bit<64> now = (bit<64>)standard_metadata.egress_global_timestamp * 1000;
        bool paused = now < until;
        bool hold = false;
        bit<32> hq = (bit<32>)egress * 16 + (bit<32>)meta.pfc_class * 2 + (meta.low ? 32w1 : 32w0);
        @atomic {
            bit<32> next;
            bit<32> serve;
            bit<64> moved;
            hold_next.read(next, hq);
            hold_serve.read(serve, hq);
            hold_moved_ns.read(moved, hq);
            if (!meta.ticketed) {
                if (paused || next != serve) {
                    hold = true;
                    meta.ticketed = true;
                    meta.ticket = next;
                    if (next == serve) {
                        moved = now;
                    }
                    next = next + 1;
                }
            } else {
                bit<32> ahead = meta.ticket - serve;
                if (paused) {
                    hold = true;
                    moved = now;
                } else if (ahead == 0) {
                    serve = serve + 1;
                    moved = now;
                } else if (ahead[31:31] == 1) {
                    /* Older than the one served: its turn was skipped. */
                } else if (now - moved > HOLD_SKIP_NS) {
                    serve = meta.ticket + 1;
                    moved = now;
                } else {
                    hold = true;
                }
            }
            hold_next.write(hq, next);
            hold_serve.write(hq, serve);
            hold_moved_ns.write(hq, moved);
        }
        if (hold) {
            if (paused && !meta.low) {
                /* While the high queue's paused packets go round, the
                 * low queue is not served at all: its held packets are
                 * not lost either. */
                hold_moved_ns.write(hq + 1, now);
            }
            if (meta.rcm_on) {
                /* A pause is no reason to take the flow's packets in
                 * this queue for lost. */
                flow_seen_ns.write(meta.flow_slot * 2 + (meta.low ? 32w1 : 32w0), now);
            }
            meta.held_port = egress;
            held.count((bit<32>)egress);
            recirculate_preserving_field_list(FL_HELD);
            return;
        }

        /* RCC's rate limit and a flow's order across its queues. Where
         * CNs named the harmful flows, their packets leave at W_c a
         * window (LIM_TAKE); any packet leaves only once its flow's
         * older packets in the other queue have (flow_out); the others
         * go round through the recirculation port. Those that wait
         * leave in the order they came, by tickets per flow and queue
         * as for a pause, so that one flow never waits for another's
         * credit. Once the port is no longer an edge the held packets
         * leave as they come. Waits for credit or for older packets are
         * no reason to skip a ticket; older packets are taken for lost
         * once their queue is empty and they have shown no life for
         * HOLD_SKIP_NS (flow_seen_ns). */
        if (meta.rcm_on) {
            bit<32> tq = meta.flow_slot * 2 + (meta.low ? 32w1 : 32w0);
            bit<32> other = meta.flow_slot * 2 + (meta.low ? 32w0 : 32w1);
            bool limited = false;
            if (meta.lim_charged && meta.window_ns != 0) {
                bit<64> named_until;
                named_until_ns.read(named_until, (bit<32>)egress);
                limited = named_until > now;
            }
            bit<32> gone;
            flow_out.read(gone, other);
            bool behind = false;
            if ((gone - meta.before)[31:31] == 1) {
                /* The other queue still holds packets: the flow's older
                 * ones may be among them, waiting their turn (strict
                 * priority can keep the low queue waiting for as long as
                 * the high one is busy). */
                bit<64> seen;
                bit<32> in_low;
                bit<32> in_all;
                flow_seen_ns.read(seen, other);
                low_bytes.read(in_low, (bit<32>)egress);
                queue_bytes.read(in_all, (bit<32>)egress);
                bool other_busy = meta.low ? in_all > in_low : in_low != 0;
                behind = other_busy || now - seen <= HOLD_SKIP_NS;
            }
            bool lim_hold = false;
            @atomic {
                bit<32> next;
                bit<32> serve;
                lim_next.read(next, tq);
                lim_serve.read(serve, tq);
                if (!meta.lim_ticketed) {
                    /* Most packets: none of the flow's wait, and nor
                     * does this one; nothing to write. */
                    meta.lim_ok = false;
                    if (next == serve) {
                        meta.lim_ok = !behind;
                        if (meta.lim_ok && limited) {
                            LIM_TAKE(egress, len, now)
                        }
                        if (!meta.lim_ok) {
                            lim_rounds.write(tq, 0);
                        }
                    }
                    if (!meta.lim_ok) {
                        lim_hold = true;
                        meta.lim_ticketed = true;
                        meta.lim_ticket = next;
                        lim_next.write(tq, next + 1);
                    }
                } else {
                    bit<32> rounds;
                    lim_rounds.read(rounds, tq);
                    bit<32> ahead = meta.lim_ticket - serve;
                    if (ahead == 0) {
                        meta.lim_ok = !behind;
                        if (meta.lim_ok && limited) {
                            LIM_TAKE(egress, len, now)
                        }
                        if (meta.lim_ok) {
                            serve = serve + 1;
                        } else {
                            lim_hold = true;
                        }
                        rounds = 0;
                    } else if (ahead[31:31] == 1) {
                        /* Older than the one served: its turn was skipped. */
                    } else if (rounds > ((next - serve) << 2) + 16) {
                        /* Every later ticket has come round four times
                         * since the next one last did: it was lost (a
                         * full recirculation queue). */
                        serve = meta.lim_ticket + 1;
                        rounds = 0;
                    } else {
                        lim_hold = true;
                        rounds = rounds + 1;
                    }
                    lim_serve.write(tq, serve);
                    lim_rounds.write(tq, rounds);
                }
            }
            if (lim_hold) {
                flow_seen_ns.write(tq, now);
                meta.held_port = egress;
                limit_holds.count((bit<32>)egress);
                recirculate_preserving_field_list(FL_HELD);
                return;
            }
        }

        /* The packet leaves its queue. A held one stayed in the byte
         * counts while it went round, as in a paused queue: in the low
         * queue's in particular, so that harmful packets keep going low
         * behind it and CRD keeps leaving it out. */
        bit<32> q;
        bit<32> behind; /* the port's queue behind the packet, for INT */
        bit<32> waiting;
        bit<32> limiting;
        @atomic {
            queue_bytes.read(q, (bit<32>)egress);
            queue_bytes.write((bit<32>)egress, q > len ? q - len : 0);
            behind = q > len ? q - len : 0;
            low_bytes.read(waiting, (bit<32>)egress);
            if (meta.low) {
                low_bytes.write((bit<32>)egress, waiting > len ? waiting - len : 0);
            }
            limit_bytes.read(limiting, (bit<32>)egress);
            if (meta.lim_charged) {
                limit_bytes.write((bit<32>)egress, limiting > len ? limiting - len : 0);
            }
            if (meta.rcm_on) {
                bit<32> left;
                bit<32> mine = meta.flow_slot * 2 + (meta.low ? 32w1 : 32w0);
                flow_out.read(left, mine);
                flow_out.write(mine, left + 1);
                flow_seen_ns.write(mine, now);
            }
        }
        if (meta.rcm_on && !meta.low) {
            /* The high queue is sending, so the low one may wait for
             * as long as it does: no reason to take the ticket its
             * held packets wait for as lost. */
            hold_moved_ns.write(hq + 1, now);
        }
        /* RED, ECN and WRED judge a packet of the high queue by the
         * bytes ahead of it there, not by the harmful packets RCC put
         * in the low queue or holds to its rate: those would mark the
         * flows RCC protects (the model's marking leaves held bytes out
         * the same way). */
        if (!meta.low && !meta.lim_charged) {
            bit<32> held_back = waiting + limiting;
            q = q > held_back ? q - held_back : 0;
        }

        /* The packet leaves its ingress port's account; below XON the
         * port resumes its neighbour with a PAUSE of quanta 0. */
        bool resume = false;
        @atomic {
            bit<32> account;
            ingress_bytes.read(account, (bit<32>)meta.in_port);
            account = account > len ? account - len : 0;
            ingress_bytes.write((bit<32>)meta.in_port, account);
            bit<1> sent;
            xoff_sent.read(sent, (bit<32>)meta.in_port);
            if (sent == 1 && account <= meta.xon_bytes) {
                xoff_sent.write((bit<32>)meta.in_port, 0);
                resume = true;
            }
        }
        if (resume) {
            meta.emit = EMIT_XON;
            clone_preserving_field_list(CloneType.E2E, (bit<32>)meta.in_port + 1, FL_CLONE);
        }

        red_config.apply();
        /* A packet's priority is lossless when PFC is on at the port it
         * came in on and protects its class. A held packet (recirculated
         * while its priority was paused) was admitted on its first pass,
         * and its PFC settings do not come round with it. */
        bool lossless = meta.pfc_on && meta.pfc_class == meta.pfc_priority;
        bool dropped = false;
        if (red_on && hdr.ipv4.isValid() && buf_max != 0 && q > buf_max && !lossless &&
            standard_metadata.instance_type != INSTANCE_RECIRC) {
            buf_max_drops.count((bit<32>)egress);
            mark_to_drop(standard_metadata);
            dropped = true;
        } else if (red_on && hdr.ipv4.isValid()) {
            if (hdr.ipv4.ecn == 0) {
                if (wred_k != 0 && q >= wred_k) {
                    wred_drops.count((bit<32>)egress);
                    mark_to_drop(standard_metadata);
                    dropped = true;
                }
            } else if (q >= kmax) {
                hdr.ipv4.ecn = 3;
                ecn_marks.count((bit<32>)egress);
            } else if (q > kmin) {
                bit<32> r;
                random(r, 0, 0xFFFFFFFF);
                if (r < (q - kmin) * slope) {
                    hdr.ipv4.ecn = 3;
                    ecn_marks.count((bit<32>)egress);
                }
            }
        }

        /* INT: the packet leaves the port now (held packets went round
         * above and push nothing until they leave). A port int_config
         * names counts its bytes, and pushes its hop record onto the
         * stack of a packet that asks, at the front (the stack is the
         * last switch's first), while the stack has room: fewer than
         * MAX_INT_HOPS records and remaining above 0. A packet that
         * finds none leaves with its stack as it came, flagged exceeded. */
        if (!dropped && int_on) {
            bool push = hdr.int_shim.isValid() && hdr.int_shim.hop_count < MAX_INT_HOPS &&
                        hdr.int_shim.remaining != 0;
            INT_COUNT(push ? len + INT_HOP_BYTES : len)
            if (push) {
                hdr.int_hops.push_front(1);
                hdr.int_hops[0].setValid();
                hdr.int_hops[0].ts_ns = (bit<32>)now;
                hdr.int_hops[0].tx_bytes = int_sent;
                hdr.int_hops[0].qlen_bytes = behind;
                hdr.int_hops[0].rate_kbps = int_rate;
                hdr.int_shim.hop_count = hdr.int_shim.hop_count + 1;
                hdr.int_shim.remaining = hdr.int_shim.remaining - 1;
                hdr.ipv4.total_len = hdr.ipv4.total_len + (bit<16>)INT_HOP_BYTES;
                hdr.udp.length = hdr.udp.length + (bit<16>)INT_HOP_BYTES;
                /* RoCEv2 sends UDP's checksum as 0, and a record added
                 * would void any other. */
                hdr.udp.checksum = 0;
                int_hops.count((bit<32>)egress);
            } else if (hdr.int_shim.isValid()) {
                hdr.int_shim.exceeded = 1;
                int_exceeded.count((bit<32>)egress);
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
