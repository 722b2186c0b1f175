#!/usr/bin/env python3
"""Writes the inputs of the rcm.p4 golden cases: the frames, the ports, the
entries and the queue rates. Recording (go test ./v1model -run
TestRecordGolden -record, where BMv2 is installed) fills in what BMv2 sent.
Hosts are as in p4/rig_test.go: host n on port n, 10.0.0.n, 02:00:00:00:00:0n;
the switch port n is 02:00:00:00:01:0n; data frames are 1,000 bytes."""
import argparse, json, os, struct

from framing import csum

# The files go beside this script, wherever it is run from (the
# recorder, TestRecordGolden, reads them there), or to --out.
_ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
_ap.add_argument('--out', default=os.path.dirname(os.path.abspath(__file__)),
                 help='directory to write the cases into (default: this script\'s)')
OUT = _ap.parse_args().out


def out(name):
    """The path of a case's file."""
    return os.path.join(OUT, name)

FRAME = 1000
PFC_PRIO = 3
ROCE_DSCP = 26  # class selector 3: the lossless priority

def mac(n, switch=False):
    return bytes([2, 0, 0, 0, 1 if switch else 0, n])

def data(src, dst, seq, ecn=0, sport=1000, dport=4791, ttl=64, dstip=None, size=FRAME, dscp=0, head=None):
    """A data frame: seq the payload's first four bytes, or head its start."""
    eth = mac(src, True) + mac(src) + b'\x08\x00'
    head = struct.pack('!I', seq) if head is None else head
    payload = head + bytes(size - 14 - 20 - 8 - len(head))
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, dscp << 2 | ecn, 20 + 8 + len(payload), 0, 0x4000, ttl, 17, 0,
                     bytes([10, 0, 0, src]), bytes(dstip or [10, 0, 0, dst]))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0)
    return (eth + ip + udp + payload).hex()

def roce(src, dst, psn, ecn=0, dscp=0):
    """A RoCEv2 data frame as p4/packets_test.go builds them: a BTH of
    zeros but its PSN, then zeros to FRAME bytes."""
    return data(src, dst, 0, ecn=ecn, dscp=dscp, head=bytes(8) + struct.pack('!I', psn))

def pause(n, prio, quanta):
    b = bytearray(60)
    b[0:6] = bytes([0x01, 0x80, 0xc2, 0, 0, 1])
    b[6:12] = mac(n)
    b[12:14] = b'\x88\x08'
    b[14:16] = b'\x01\x01'
    b[17] = 1 << prio
    struct.pack_into('!H', b, 18 + 2 * prio, quanta)
    return bytes(b).hex()

def burst(port, frames):
    """Back to back, in runs of 16 a millisecond apart: BMv2 loses frames
    of longer runs before its pipeline sees them."""
    out = []
    for i, f in enumerate(frames):
        p = {"port": port, "frame": f}
        if i > 0:
            p["burst"] = True
            if i % 16 == 0:
                p["gap_us"] = 1000
        out.append(p)
    return out

def after(us, packets):
    """Starts packets us microseconds after the previous frame, without
    waiting for the ports to fall quiet: a burst that comes while the
    paced queue still waits out the last departure's gap leaves at times
    the rate fixes, not at the whim of BMv2's egress thread."""
    packets[0]["burst"] = True
    packets[0]["gap_us"] = us
    return packets

# Bursts go into ports paced at RATE packets/s, GAP_US after a lone frame:
# the lone frame has long left (even on a busy machine), and the burst's
# first frame still waits out the 50 ms gap its departure set.
RATE = 20
GAP_US = 20000

def primed(ports, packets, src=1):
    """A lone frame through each paced port's idle queue, then, 1 ms
    later, the burst: the burst's first frame then waits out the gap the
    lone frame's departure set, so that every frame of the burst leaves
    at a time the rate fixes. (A burst into an idle queue races BMv2's
    egress thread against its ingress thread for the first frame.)"""
    lone = [{"port": src, "frame": data(src, p, 900 + p, ecn=0)} for p in ports]
    for i, p in enumerate(lone):
        if i > 0:
            p["burst"] = True
    return lone + after(GAP_US, packets)

def spaced(port, us, frames):
    """Frames us microseconds apart, so that their arrival times, which
    the program reads (CNs go at most every cn_interval_ns), are the
    case's and not the sender's."""
    out = burst(port, frames)
    for p in out[1:]:
        p["gap_us"] = us
    return out

def routes():
    return [{"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.%d" % n, 32]},
             "action_name": "RcmIngress.set_nexthop",
             "action_params": {"port": n, "src_mac": "02:00:00:00:01:%02x" % n, "dst_mac": "02:00:00:00:00:%02x" % n}}
            for n in (1, 2, 3)]

def red(port, k, wred, buf_max=0):
    return {"table": "RcmEgress.red_config", "match": {"standard_metadata.egress_port": port},
            "action_name": "RcmEgress.set_red",
            "action_params": {"kmin_bytes": k, "kmax_bytes": k, "pmax_slope": 0, "wred_k_bytes": wred,
                              "buf_max_bytes": buf_max}}

def port_config(port, xoff=0, xon=0, quanta=0, quantum_ns=0, prio=0, cn=0, cn_interval=0, cn_bytes=0, cn_hold=0):
    return {"table": "RcmIngress.ingress_port_config", "match": {"standard_metadata.ingress_port": port},
            "action_name": "RcmIngress.set_port",
            "action_params": {"mac": "02:00:00:00:01:%02x" % port, "xoff_bytes": xoff, "xon_bytes": xon,
                              "pause_quanta": quanta, "quantum_ns": quantum_ns, "pfc_priority": prio,
                              "cn_enabled": cn, "cn_interval_ns": cn_interval, "cn_ingress_bytes": cn_bytes,
                              "cn_hold_ns": cn_hold}}

def write(name, about, entries, packets, rates=None, skip_registers=None, skip_counters=None, queues=0, runtime=None,
          clones=True, clocks=None):
    """Writes a case; runtime names another case's entries instead of
    writing its own (entries then None); clones=False leaves out the
    clone sessions; clocks are the times from the target's clock the
    frames sent carry (v1model.GoldenClock)."""
    g = {"about": about, "program": "../../../p4/build/rcm.json", "runtime": runtime or name + ".runtime.json",
         "recorded_with": "", "ports": [1, 2, 3], "packets": packets, "digests_recorded": False,
         "sent": {}, "counters": {}, "registers": {}, "digests": []}
    if rates:
        g["queue_rates"] = rates
    if queues:
        g["priority_queues"] = queues
    if skip_registers:
        g["skip_registers"] = skip_registers
    if skip_counters:
        g["skip_counters"] = skip_counters
    if clocks:
        g["clock_fields"] = clocks
    json.dump(g, open(out(name + ".json"), "w"), indent=1)
    if runtime:
        return
    # PAUSE frames and CNs leave port p through clone session p + 1
    # (p4.CloneSession).
    rt = {"table_entries": entries}
    if clones:
        rt["clone_session_entries"] = [{"clone_session_id": p + 1, "replicas": [{"egress_port": p, "instance": 1}]}
                                       for p in (1, 2, 3)]
    json.dump(rt, open(out(name + ".runtime.json"), "w"), indent=1)

K = 4 * FRAME
write("rcm-ecn", "RED/ECN at egress (p4/packets_test.go TestECNMarking): five ECT(0) packets one at a time leave unmarked; "
      "a burst of 20 into a port paced at 20 packets/s is marked CE past Kmax, the last few not",
      routes() + [red(2, K, 0)],
      [{"port": 1, "frame": data(1, 2, i, ecn=2)} for i in range(5)] + after(GAP_US, burst(1, [data(1, 2, i, ecn=2) for i in range(20)])),
      rates={"2": RATE})
write("rcm-wred", "WRED (TestECNMarking): a burst of 20 packets that are not ECN-capable into a port paced at 20 "
      "packets/s: never marked, dropped from the WRED threshold on (q >= K, LDCP's eq. 3: the packet that finds "
      "exactly K bytes queued, itself included, is dropped) and counted",
      routes() + [red(2, K, K)],
      primed([2], burst(1, [data(1, 2, i, ecn=0) for i in range(20)])),
      rates={"2": RATE})
# buf_max (LDCP's switches): WRED K of 4 frames and buf_max of 6 on port 2.
# A packet of the burst leaves egress with the burst's rest queued behind
# it (q = 20 frames less one per packet before it): packets finding more
# than 6 frames are dropped whatever their ECN (buf_max comes first); of
# the rest, the Not-ECT ones from q >= 4 frames (WRED; frame 16 finds
# exactly K), the ECT(0) ones pass. An ECT(0) burst of the lossless
# priority (PFC on at port 1, XOFF past the burst) loses nothing.
write("rcm-bufmax", "buf_max and WRED (p4/packets_test.go TestBufMax): port 2 with WRED K of 4 frames and buf_max of 6, "
      "paced at 20 packets/s. A burst of 20 of priority 0 alternating Not-ECT and ECT(0): any packet that finds more "
      "than buf_max queued dropped (buf_max_drops), then Not-ECT ones from q >= K (wred_drops; one finds exactly K), "
      "none marked (no ECN curve); then 20 ECT(0) of priority 3, lossless at port 1: all through, whatever the queue",
      routes() + [red(2, 0xffffffff, 4 * FRAME, buf_max=6 * FRAME),
                  port_config(1, xoff=100 * FRAME, xon=99 * FRAME, quanta=0xffff, quantum_ns=5120, prio=PFC_PRIO)],
      primed([2], burst(1, [data(1, 2, i, ecn=2 * (i % 2)) for i in range(20)])) +
      primed([2], burst(1, [data(1, 2, 100 + i, ecn=2, sport=1001, dscp=ROCE_DSCP) for i in range(20)])),
      rates={"2": RATE})
TIME = "a time in ns from the target's clock: BMv2's and the replay's clocks differ"
TICKETS = ("how many frames took a ticket depends on how fast the target loops: on BMv2 five or six from run to run "
           "(the late two find the loop drained, or one of them does not), in the replay four (both late ones find it "
           "drained): the order on the wire is what is compared")
write("rcm-pfc-send", "PFC sent (TestPFC): a burst of 10 from port 1 into a port paced at 20 packets/s passes XOFF "
      "(3 frames): a PAUSE for priority 3 with 0xffff quanta goes out of port 1, then one with 0 once below XON",
      routes() + [port_config(1, xoff=3 * FRAME, xon=FRAME, quanta=0xffff, quantum_ns=5120, prio=PFC_PRIO)],
      primed([2], burst(1, [data(1, 2, i, ecn=2, dscp=ROCE_DSCP) for i in range(10)])),
      rates={"2": RATE}, skip_registers={"xoff_sent_ns": TIME})
write("rcm-pfc-honour", "PFC honoured (TestPFC): host 2 pauses priority 3 for 0xffff quanta of 10 us; a frame for it "
      "(DSCP 26) waits (recirculating) while one of priority 0 passes, and through a PAUSE of another priority, until "
      "host 2 sends quanta 0; then a pause of 20,000 quanta that runs out holds another for 200 ms. One frame at a time: held frames recirculate, and the order "
      "several of them leave in depends on where each is in its loop when the pause ends, on BMv2 as on any target",
      routes() + [port_config(2, quantum_ns=10000, prio=PFC_PRIO)],
      [{"port": 2, "frame": pause(2, PFC_PRIO, 0xffff)}, {"port": 1, "frame": data(1, 2, 0, ecn=2, dscp=ROCE_DSCP)},
       {"port": 1, "frame": data(1, 2, 100, ecn=2, sport=1001)},
       {"port": 2, "frame": pause(2, PFC_PRIO + 1, 0)}, {"port": 2, "frame": pause(2, PFC_PRIO, 0)},
       {"port": 2, "frame": pause(2, PFC_PRIO, 20000)}, {"port": 1, "frame": data(1, 2, 1, ecn=2, dscp=ROCE_DSCP)}],
      rates={"2": 2000},
      skip_registers={"paused_until_ns": TIME, "hold_moved_ns": TIME, "flow_seen_ns": TIME},
      skip_counters={"RcmEgress.held": "counts recirculation passes of held packets: how many depends on how fast the target loops, not on the program"})
write("rcm-pfc-order", "PFC keeps order (TestPFC's switch): host 2 pauses priority 3; four frames for it (PSNs 10-13) are held "
      "and go round the recirculation port; 20 ms later host 2 resumes, and two more (PSNs 14, 15) come in at once, "
      "while the held ones are still going round. All six leave in the order they came: the ones that came after the "
      "pause take a ticket too and go round once, behind the held ones.",
      None,
      [{"port": 2, "frame": pause(2, PFC_PRIO, 0xffff)}] +
      burst(1, [roce(1, 2, psn, ecn=2, dscp=ROCE_DSCP) for psn in range(10, 14)]) +
      after(20000, [{"port": 2, "frame": pause(2, PFC_PRIO, 0)}]) +
      [{"port": 1, "frame": roce(1, 2, psn, ecn=2, dscp=ROCE_DSCP), "burst": True} for psn in (14, 15)],
      rates={"2": 2000}, runtime="rcm-pfc-honour.runtime.json",
      skip_registers={"paused_until_ns": TIME, "hold_moved_ns": TIME,
                      "hold_next": TICKETS, "hold_serve": TICKETS},
      skip_counters={"RcmEgress.held": "counts recirculation passes of held packets: how many depends on how fast the target loops, not on the program"})

def fwd(src, dst, n=64, ttl=64, sport=5000, dport=4791, dstip=None):
    """rcm-forward's frames: UDP from host src, IP ID 1, n payload bytes
    counting up from 0, to the switch's port 1 MAC whatever the port."""
    payload = bytes(range(n))
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + 8 + n, 1, 0, ttl, 17, 0, bytes([10, 0, 0, src]),
                     bytes(dstip or [10, 0, 0, dst]))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return (mac(1, True) + mac(src) + b'\x08\x00' + ip + struct.pack('!HHHH', sport, dport, 8 + n, 0) + payload).hex()

def rcm_config(port):
    """As p4/packets_test.go rcmPort: every packet a CRD sample, Q_eq two
    frames, a degree unit of 256 bytes, one CAM hit makes a flow harmful,
    W two frames; queues 1 (normal) and 0 (past W_c)."""
    return {"table": "RcmIngress.rcm_config", "match": {"standard_metadata.egress_spec": port},
            "action_name": "RcmIngress.set_rcm",
            "action_params": {"sample_every": 1, "qeq_bytes": 2 * FRAME, "wq_shift": 1, "fb_shift": 8,
                              "cam_min_hits": 1, "window_bytes": 2 * FRAME, "window_ns": 0, "high_priority": 1, "low_priority": 0}}

def cn_port(port, enabled):
    return port_config(port, cn=1 if enabled else 0, cn_interval=1000000, cn_hold=4000000000)

def ecmp(base=100):
    return [{"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.9.0", 24]},
             "action_name": "RcmIngress.set_ecmp_group", "action_params": {"base": base, "size": 2}}] + [
            {"table": "RcmIngress.ecmp_member", "match": {"meta.ecmp_base": base, "meta.ecmp_offset": i},
             "action_name": "RcmIngress.set_nexthop",
             "action_params": {"port": n, "src_mac": "02:00:00:00:01:%02x" % n, "dst_mac": "02:00:00:00:00:%02x" % n}}
            for i, n in ((0, 2), (1, 3))]

def cn(n, fb, flows):
    b = mac(n, True) + mac(n) + b'\x88\xb5' + bytes([1 << 4, fb, len(flows), 0])
    for sport in flows:
        b += bytes([10, 0, 0, 1, 10, 0, 9, 7]) + struct.pack('!HH', sport, 4791) + bytes([17])
    return (b + bytes(max(0, 60 - len(b)))).hex()

RCM_TIME = dict((r, TIME) for r in ("xoff_sent_ns", "paused_until_ns", "remote_until_ns", "named_until_ns", "cn_next_ns",
                                      "pin_seen_ns", "flow_seen_ns", "hold_moved_ns", "lim_start_ns"))
write("rcm-cn-root", "RCM at a root (TestRCMRootSendsCN): 10 frames 5 ms apart (BMv2's receive path may pass two frames sent 2 ms apart to the pipeline less than the CN interval apart) into port 2 paced at 5 packets/s (so that every frame has come in before the second one leaves, however long the recorder takes to send them) make it congested; the flow enters port 2's CAM, and a CN naming it goes out of port 1, where the flow came from, and another each time one arrives over a millisecond after the last CN; once a frame of another flow (source port 1001) has come in after the fourth, the first flow is a heavy hitter, hits the CAM and is held past W_c",
      routes() + [rcm_config(2), cn_port(1, True)],
      primed([2], spaced(1, 5000, [data(1, 2, i, ecn=2) for i in range(4)] + [data(1, 2, 0, ecn=2, sport=1001)] +
                                  [data(1, 2, i, ecn=2) for i in range(4, 10)])),
      rates={"2": 5}, queues=2, skip_registers=RCM_TIME)
# In rcm-forward's recording, flows 10.0.0.1:5000..5007 -> 10.0.9.7:4791 hash
# to port 3 for source ports 5000, 5003, 5005, 5006, to port 2 for the rest.
HARMFUL, OTHERS = 5000, (5003, 5005, 5006)
sar = {"table": "RcmIngress.sar_group", "match": {"meta.ecmp_base": 100}, "action_name": "RcmIngress.set_sar_members",
       "action_params": {"members": 2, "p0": 2, "p1": 3, "p2": 0, "p3": 0, "pin_idle_ns": 1000000000}}
to_group = lambda sport, seq: data(1, 0, seq, ecn=2, sport=sport, dstip=[10, 0, 9, 7])
write("rcm-cn-edge", "RCM at an edge (TestRCMEdgeTakesCNAndDetours): a CN from downstream on port 3 puts port 3's "
      "region in RCC, cuts its W_c and names its flow there (named); that flow keeps port 3 (harmful flows are never detoured), is harmful "
      "and held past W_c; new flows that hash to port 3 take port 2, the member with the lower degree",
      routes() + ecmp() + [rcm_config(3), cn_port(3, False), sar],
      [{"port": 3, "frame": cn(3, 40, [HARMFUL])}] +
      primed([2, 3], spaced(1, 2000, [to_group(HARMFUL, i) for i in range(4)] + [to_group(s, i) for s in OTHERS for i in (1, 2)])),
      rates={"2": RATE, "3": RATE}, queues=2, skip_registers=RCM_TIME)

write("rcm-forward", "rcm.p4 forwarding: routes to hosts, TTL, no route, ECMP over two ports by 5-tuple hash, a truncated frame",
      routes() + ecmp(),
      [{"port": 1, "frame": fwd(1, 2)}, {"port": 2, "frame": fwd(2, 1, n=200)}, {"port": 1, "frame": fwd(1, 3, ttl=2)},
       {"port": 1, "frame": fwd(1, 2, ttl=1)}, {"port": 1, "frame": fwd(1, 9)}] +
      [{"port": 1, "frame": fwd(1, 0, dstip=[10, 0, 9, 7], sport=5000 + i)} for i in range(8)] +
      [{"port": 1, "frame": fwd(1, 2)[:60]}, {"port": 3, "frame": fwd(3, 2, dport=53)}],
      clones=False)

# INT (p4/README.md, "INT"): a data packet asks with DSCP bit 0 and
# carries a 4-byte shim (version 1, exceeded, hop count, remaining) and
# 16-byte hop records (time ns, bytes sent, queue, rate kb/s), the last
# switch's first, after its BTH.
INT_DSCP = ROCE_DSCP | 1
INT_RATE_KBPS = 160  # 20 packets/s of 1,000 bytes

def int_config(port, rate=INT_RATE_KBPS):
    return {"table": "RcmEgress.int_config", "match": {"standard_metadata.egress_port": port},
            "action_name": "RcmEgress.set_int", "action_params": {"rate_kbps": rate}}

def int_stack(hops, remaining, version=1, count=None, exceeded=False):
    """A shim and records; hops are (ns, tx, qlen, rate) tuples, the last
    switch's first."""
    b = bytes([version << 4 | (8 if exceeded else 0), len(hops) if count is None else count, remaining, 0])
    for h in hops:
        b += struct.pack('!IIII', *h)
    return b

def int_frame(src, dst, psn, stack, dscp=INT_DSCP, opcode=0x01, size=FRAME):
    """A RoCEv2 frame whose BTH (opcode, PSN) is followed by stack."""
    bth = bytes([opcode]) + bytes(7) + struct.pack('!I', psn)
    return data(src, dst, 0, ecn=2, dscp=dscp, head=bth + stack, size=size)

UPSTREAM = [(1000 * i, 5000 * i, 100 * i, 100_000_000) for i in (1, 2, 3, 4, 5)]
# Port 2 sends the lone frame, then the burst in order; pushed records
# are at the frames that asked with room left.
INT_BURST = [
    int_frame(1, 2, 0, int_stack([], 5)),                    # pushed: 1 hop
    int_frame(1, 2, 1, int_stack([], 5)),                    # pushed
    int_frame(1, 2, 2, int_stack(UPSTREAM[:2], 3)),          # pushed in front of two: 3 hops
    int_frame(1, 2, 3, int_stack(UPSTREAM, 0)),              # full: exceeded, no push
    int_frame(1, 2, 4, int_stack(UPSTREAM[:1], 0)),          # none remaining: exceeded
    int_frame(1, 2, 5, int_stack(UPSTREAM[:2], 3), dscp=ROCE_DSCP),  # does not ask: untouched
    int_frame(1, 2, 6, bytes(4) + int_stack(UPSTREAM[:3], 2), dscp=48, opcode=0x11,
              size=14 + 20 + 8 + 12 + 4 + 4 + 48 + 4),              # an ACK's echo after its AETH: untouched
    int_frame(1, 2, 7, int_stack([], 5)),                    # pushed
]
# The new record's time is at the front of the stack: Ethernet, IPv4,
# UDP, BTH, shim.
INT_TIME_AT = 14 + 20 + 8 + 12 + 4
INT_CLOCK = "the new record's time, from the target's clock: BMv2's and the replay's differ"
INT_CLOCKS = [{"port": 2, "frames": [1, 2, 3, 8], "offset": INT_TIME_AT, "bytes": 4, "tolerance_ns": 5_000_000,
               "about": INT_CLOCK}]
write("rcm-int", "INT (p4/packets_test.go TestINTPushesEgressQueue): port 2 pushes its record (time, bytes sent before, "
      "queue behind, 160 kb/s) in front of a data packet's stack when it asks (DSCP 27) and the stack has room; a full "
      "stack, or one with none remaining, leaves flagged exceeded; a packet that does not ask (DSCP 26) and an ACK "
      "echoing a stack pass untouched, and so does a packet that asks through port 3, which has no int_config. A stack "
      "of version 2, one of six hops and one the frame ends inside are dropped at ingress and counted (int_malformed)",
      routes() + [int_config(2)],
      primed([2], burst(1, INT_BURST)) +
      [{"port": 1, "frame": int_frame(1, 2, 20, int_stack([], 5, version=2))},
       {"port": 1, "frame": int_frame(1, 2, 21, int_stack(UPSTREAM, 0, count=6) + bytes(16))},
       {"port": 1, "frame": int_frame(1, 2, 22, int_stack(UPSTREAM[:1], 4, count=3), size=14 + 20 + 8 + 12 + 4 + 16)},
       {"port": 1, "frame": int_frame(1, 3, 23, int_stack([], 5))}],
      rates={"2": RATE}, clocks=INT_CLOCKS)
write("rcm-int-held", "INT on a held packet (TestINTPushesOnceWhenHeld): host 2 pauses priority 3; a data packet asking "
      "for INT (DSCP 27, priority 3) goes round the recirculation port until host 2 resumes, and leaves with one record "
      "pushed, not one per pass",
      routes() + [port_config(2, quantum_ns=10000, prio=PFC_PRIO), int_config(2)],
      [{"port": 2, "frame": pause(2, PFC_PRIO, 0xffff)}, {"port": 1, "frame": int_frame(1, 2, 0, int_stack([], 5))}] +
      after(20000, [{"port": 2, "frame": pause(2, PFC_PRIO, 0)}]),
      rates={"2": 2000}, clocks=[{"port": 2, "frames": [0], "offset": INT_TIME_AT, "bytes": 4, "tolerance_ns": 0, "about": INT_CLOCK}],
      skip_registers={"paused_until_ns": TIME, "hold_moved_ns": TIME, "flow_seen_ns": TIME},
      skip_counters={"RcmEgress.held": "counts recirculation passes of held packets: how many depends on how fast the target loops, not on the program"})
