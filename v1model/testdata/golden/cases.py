#!/usr/bin/env python3
"""Writes the inputs of the rcm.p4 golden cases: the frames, the ports, the
entries and the queue rates. Recording (go test ./v1model -run
TestRecordGolden -record, where BMv2 is installed) fills in what BMv2 sent.
Hosts are as in p4/rig_test.go: host n on port n, 10.0.0.n, 02:00:00:00:00:0n;
the switch port n is 02:00:00:00:01:0n; data frames are 1,000 bytes."""
import json, struct, sys

FRAME = 1000
PFC_PRIO = 3

def csum(b):
    s = 0
    for i in range(0, len(b), 2):
        s += (b[i] << 8) + (b[i + 1] if i + 1 < len(b) else 0)
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff

def mac(n, switch=False):
    return bytes([2, 0, 0, 0, 1 if switch else 0, n])

def data(src, dst, seq, ecn=0, sport=1000, dport=4791, ttl=64, dstip=None, size=FRAME):
    eth = mac(src, True) + mac(src) + b'\x08\x00'
    payload = struct.pack('!I', seq) + bytes(size - 14 - 20 - 8 - 4)
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, ecn, 20 + 8 + len(payload), 0, 0x4000, ttl, 17, 0,
                     bytes([10, 0, 0, src]), bytes(dstip or [10, 0, 0, dst]))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0)
    return (eth + ip + udp + payload).hex()

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

def routes():
    return [{"table": "RcmIngress.ipv4_lpm", "match": {"hdr.ipv4.dst_addr": ["10.0.0.%d" % n, 32]},
             "action_name": "RcmIngress.set_nexthop",
             "action_params": {"port": n, "src_mac": "02:00:00:00:01:%02x" % n, "dst_mac": "02:00:00:00:00:%02x" % n}}
            for n in (1, 2, 3)]

def red(port, k, wred):
    return {"table": "RcmEgress.red_config", "match": {"standard_metadata.egress_port": port},
            "action_name": "RcmEgress.set_red",
            "action_params": {"kmin_bytes": k, "kmax_bytes": k, "pmax_slope": 0, "wred_k_bytes": wred}}

def port_config(port, xoff=0, xon=0, quanta=0, quantum_ns=0, prio=0, cn=0, cn_interval=0, cn_bytes=0, cn_hold=0):
    return {"table": "RcmIngress.ingress_port_config", "match": {"standard_metadata.ingress_port": port},
            "action_name": "RcmIngress.set_port",
            "action_params": {"mac": "02:00:00:00:01:%02x" % port, "xoff_bytes": xoff, "xon_bytes": xon,
                              "pause_quanta": quanta, "quantum_ns": quantum_ns, "pfc_priority": prio,
                              "cn_enabled": cn, "cn_interval_ns": cn_interval, "cn_ingress_bytes": cn_bytes,
                              "cn_hold_ns": cn_hold}}

def write(name, about, entries, packets, rates=None, skip_registers=None, skip_counters=None):
    g = {"about": about, "program": "../../../p4/build/rcm.json", "runtime": name + ".runtime.json",
         "recorded_with": "", "ports": [1, 2, 3], "packets": packets, "digests_recorded": False,
         "sent": {}, "counters": {}, "registers": {}, "digests": []}
    if rates:
        g["queue_rates"] = rates
    if skip_registers:
        g["skip_registers"] = skip_registers
    if skip_counters:
        g["skip_counters"] = skip_counters
    json.dump(g, open(name + ".json", "w"), indent=1)
    # PAUSE frames and CNs leave port p through clone session p + 1
    # (p4.CloneSession).
    clones = [{"clone_session_id": p + 1, "replicas": [{"egress_port": p, "instance": 1}]} for p in (1, 2, 3)]
    json.dump({"table_entries": entries, "clone_session_entries": clones}, open(name + ".runtime.json", "w"), indent=1)

K = 4 * FRAME
write("rcm-ecn", "RED/ECN at egress (p4/packets_test.go TestECNMarking): five ECT(0) packets one at a time leave unmarked; "
      "a burst of 20 into a port paced at 200 packets/s is marked CE past Kmax, the last few not",
      routes() + [red(2, K, 0)],
      [{"port": 1, "frame": data(1, 2, i, ecn=2)} for i in range(5)] + after(1000, burst(1, [data(1, 2, i, ecn=2) for i in range(20)])),
      rates={"2": 200})
write("rcm-wred", "WRED (TestECNMarking): a burst of 20 packets that are not ECN-capable into a port paced at 200 "
      "packets/s: never marked, dropped past the WRED threshold and counted",
      routes() + [red(2, K, K)],
      burst(1, [data(1, 2, i, ecn=0) for i in range(20)]),
      rates={"2": 200})
TIME = "a time in ns from the target's clock: BMv2's and the replay's clocks differ"
write("rcm-pfc-send", "PFC sent (TestPFC): a burst of 10 from port 1 into a port paced at 200 packets/s passes XOFF "
      "(3 frames): a PAUSE for priority 3 with 0xffff quanta goes out of port 1, then one with 0 once below XON",
      routes() + [port_config(1, xoff=3 * FRAME, xon=FRAME, quanta=0xffff, quantum_ns=5120, prio=PFC_PRIO)],
      burst(1, [data(1, 2, i, ecn=2) for i in range(10)]),
      rates={"2": 200}, skip_registers={"xoff_sent_ns": TIME})
write("rcm-pfc-honour", "PFC honoured (TestPFC): host 2 pauses priority 3 for 0xffff quanta of 10 us; a frame for it "
      "waits (recirculating) through a PAUSE of another priority until host 2 sends quanta 0; then a pause of 20,000 "
      "quanta that runs out holds another for 200 ms. One frame at a time: held frames recirculate, and the order "
      "several of them leave in depends on where each is in its loop when the pause ends, on BMv2 as on any target",
      routes() + [port_config(2, quantum_ns=10000, prio=PFC_PRIO)],
      [{"port": 2, "frame": pause(2, PFC_PRIO, 0xffff)}, {"port": 1, "frame": data(1, 2, 0, ecn=2)},
       {"port": 2, "frame": pause(2, PFC_PRIO + 1, 0)}, {"port": 2, "frame": pause(2, PFC_PRIO, 0)},
       {"port": 2, "frame": pause(2, PFC_PRIO, 20000)}, {"port": 1, "frame": data(1, 2, 1, ecn=2)}],
      rates={"2": 2000},
      skip_registers={"paused_until_ns": TIME},
      skip_counters={"RcmEgress.held": "counts recirculation passes of held packets: how many depends on how fast the target loops, not on the program"})
