#!/usr/bin/env python3
"""Writes the inputs of the golden cases of p4/testdata's programs (see
cases.py for rcm.p4's): frames, ports and entries. Recording fills in
what BMv2 sent."""
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

ETH = bytes([2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 1])

def ipv4(proto, payload, version=4, bad_checksum=False, frag=0, tos=0):
    h = struct.pack('!BBHHHBBH4s4s', (version << 4) | 5, tos, 20 + len(payload), 7, frag, 64, proto, 0,
                    bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    c = csum(h) ^ (0x1111 if bad_checksum else 0)
    return h[:10] + struct.pack('!H', c) + h[12:] + payload

def udp(n=8):
    return struct.pack('!HHHH', 5000, 4791, 8 + n, 0) + bytes(range(n))

def tcp():
    return struct.pack('!HHIIHHHH', 5000, 80, 1, 0, 0x5002, 1024, 0, 0)

def vlan(vid, et):
    return struct.pack('!HH', vid, et)

def frame(et, body):
    return (ETH + struct.pack('!H', et) + body).hex()

def case(name, program, about, ports, packets, entries=None, extra=None, queues=0):
    g = {"about": about, "program": "../../../p4/testdata/build/%s.json" % program, "recorded_with": "",
         "ports": ports, "packets": packets, "digests_recorded": False, "sent": {}, "counters": {},
         "registers": {}, "digests": []}
    if queues:
        g["priority_queues"] = queues
    rt = {"table_entries": entries or []}
    rt.update(extra or {})
    g["runtime"] = name + ".runtime.json"
    json.dump(g, open(out(name + ".json"), "w"), indent=1)
    json.dump(rt, open(out(name + ".runtime.json"), "w"), indent=1)

# parse.p4: every frame on port 1 comes back on port 2 with a report.
P = []
P.append(frame(0x0800, ipv4(17, udp())))                          # IPv4/UDP
P.append(frame(0x0800, ipv4(17, udp(), bad_checksum=True)))       # checksum_error
P.append(frame(0x0800, ipv4(6, tcp())))                           # the union's TCP
P.append(frame(0x0800, ipv4(6, tcp(), tos=1)))                    # TCP swapped for UDP in the union
P.append(frame(0x0800, ipv4(17, udp(), frag=1)))                  # a fragment: no L4
P.append(frame(0x0800, ipv4(17, udp(), version=6)))               # verify fails: HeaderTooShort
P.append(frame(0x0800, ipv4(17, udp())[:30]))                    # UDP cut short: PacketTooShort
P.append(frame(0x8100, vlan(7, 0x0800) + ipv4(17, udp())))        # one tag
P.append(frame(0x8100, vlan(7, 0x8100) + vlan(8, 0x0800) + ipv4(17, udp())))  # two
P.append(frame(0x8100, vlan(7, 0x8100) + vlan(8, 0x8100) + vlan(9, 0x0800) + ipv4(17, udp())))  # StackOutOfBounds
P.append(frame(0x88b6, bytes([1, 4, 0, 5, 2, 4, 0, 6, 0, 0, 0, 0])))     # two probes, then kind 0
P.append(frame(0x88b6, bytes([3, 9, 9, 9, 1, 4, 0, 7, 0, 0, 0, 0])))     # padding skipped by advance
P.append(frame(0x88b6, bytes([1, 4, 0, 1] * 4 + [0] * 4)))               # four probes: the stack holds three
P.append(frame(0x88b6, bytes([1, 4])))                                    # lookahead past the end
P.append(frame(0x1234, bytes(46)))                                        # an empty value set: no match
P.append(frame(0x8847, bytes(46)))                                        # 0x88xx, masked select
P.append(frame(0x9000, bytes(46)))                                        # nothing: accept
case("parse", "parse", "parser: stacks, a union, masked and multi-field selects, lookahead, a value set, verify, "
     "parser errors and checksum errors into standard_metadata, checksum update",
     [1, 2], [{"port": 1, "frame": f} for f in P])
# (The value set stays empty: simple_switch_CLI's pvs_add makes BMv2 1.15.5
# abort on an assertion about the value's width, so the recorder cannot
# fill it; frame 0x1234 checks that an empty set matches nothing.)

# tables.p4
def keys(addr, port, proto, flags):
    return frame(0x88b6, struct.pack('!IHBB', addr, port, proto, flags) + bytes(4 * 7 + 1))
ip = lambda s: sum(int(x) << (24 - 8 * i) for i, x in enumerate(s.split('.')))
T = [keys(ip('10.1.2.3'), 80, 6, 0x01), keys(ip('10.1.9.9'), 443, 17, 0x11), keys(ip('10.2.0.1'), 8080, 6, 0x10),
     keys(ip('192.168.0.1'), 53, 17, 0x00), keys(ip('10.1.2.3'), 1000, 1, 0x21), keys(ip('172.16.5.4'), 5000, 6, 0xff)]
TE = [
    {"table": "IngressT.exact_t", "match": {"hdr.keys.proto": 6, "hdr.keys.flags": 1}, "action_name": "IngressT.set_exact", "action_params": {"v": 11}},
    {"table": "IngressT.exact_t", "match": {"hdr.keys.proto": 17, "hdr.keys.flags": 17}, "action_name": "IngressT.set_exact", "action_params": {"v": 12}},
    {"table": "IngressT.lpm_t", "match": {"hdr.keys.addr": ["10.0.0.0", 8]}, "action_name": "IngressT.set_lpm", "action_params": {"v": 8}},
    {"table": "IngressT.lpm_t", "match": {"hdr.keys.addr": ["10.1.0.0", 16]}, "action_name": "IngressT.set_lpm", "action_params": {"v": 16}},
    {"table": "IngressT.lpm_t", "match": {"hdr.keys.addr": ["10.1.2.3", 32]}, "action_name": "IngressT.set_lpm", "action_params": {"v": 32}},
    {"table": "IngressT.lpm_t", "default_action": True, "action_name": "IngressT.set_lpm", "action_params": {"v": 7}},
    {"table": "IngressT.tern_t", "match": {"hdr.keys.addr": ["10.0.0.0", "0xff000000"], "hdr.keys.port": [0, 0]}, "priority": 10, "action_name": "IngressT.set_tern", "action_params": {"v": 1}},
    {"table": "IngressT.tern_t", "match": {"hdr.keys.addr": ["10.1.0.0", "0xffff0000"], "hdr.keys.port": [80, "0xffff"]}, "priority": 20, "action_name": "IngressT.other_tern", "action_params": {"v": 2}},
    {"table": "IngressT.tern_t", "match": {"hdr.keys.addr": [0, 0], "hdr.keys.port": [443, "0xffff"]}, "priority": 5, "action_name": "IngressT.set_tern", "action_params": {"v": 3}},
    {"table": "IngressT.range_t", "match": {"hdr.keys.port": [1, 1023], "hdr.keys.proto": 6}, "priority": 1, "action_name": "IngressT.set_range", "action_params": {"v": 1}},
    {"table": "IngressT.range_t", "match": {"hdr.keys.port": [1000, 9000], "hdr.keys.proto": 6}, "priority": 2, "action_name": "IngressT.set_range", "action_params": {"v": 2}},
    {"table": "IngressT.opt_t", "match": {"hdr.keys.proto": [17, "0xff"]}, "priority": 1, "action_name": "IngressT.set_opt", "action_params": {"v": 1}},
    {"table": "IngressT.opt_t", "match": {"hdr.keys.proto": [6, "0xff"], "hdr.keys.flags": [16, "0xff"]}, "priority": 2, "action_name": "IngressT.set_opt", "action_params": {"v": 2}},
    {"table": "IngressT.slice_t", "match": {"hdr.keys.addr[31:24]": 10}, "action_name": "IngressT.set_slice", "action_params": {"v": 10}},
]
case("tables", "tables", "tables: exact, LPM with a changed default, ternary by priority, range, optional, a slice as key, "
     "const entries with a const default, branches on hit, miss and the action run",
     [1, 2], [{"port": 1, "frame": f} for f in T], TE)

# exprs.p4
def ops(a, b, c, d, e, s, t, opt=None):
    body = struct.pack('!BBHIQbh', a, b, c, d, e, s, t)
    if opt is not None:
        body += bytes([opt])
    return frame(0x88b6, body)
E = [ops(200, 100, 0xfff0, 0x80000001, 0xfffffffffffffff0, -100, -1),
     ops(5, 10, 1, 5, 0x7fffffffffffffff, 100, 300),
     ops(0, 0, 0, 0, 0, 0, 0),
     ops(0xff, 0x13, 0x8001, 0xffffffff, 0x8000000000000000, -128, -32768, opt=0x42),
     ops(17, 17, 0x1234, 0xdeadbeef, 0x0123456789abcdef, 127, 32767)]
case("exprs", "exprs", "expressions: wrap-around at 8, 16, 32 and 64 bits, signed arithmetic, comparison and shifts, "
     "saturation, slices read and written, concatenation, sign-extending casts, boolean and conditional operators, validity",
     [1, 2], [{"port": 1, "frame": f} for f in E])

# externs.p4
def cmd(c, arg=0, value=0, key=0, tags=0, src=1):
    body = struct.pack('!BBHI', c, arg, value, key) + b''.join(struct.pack('!H', 0x100 + i) for i in range(tags))
    return (bytes([2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, src]) + b'\x88\xb6' + body + bytes(20)).hex()
X = [cmd(0), cmd(1, value=1), cmd(2, value=2), cmd(3), cmd(4), cmd(5), cmd(6, value=6), cmd(7), cmd(8),
     cmd(9, arg=1, tags=1), cmd(9, arg=2, tags=2), cmd(10, value=3, key=0x01020304), cmd(10, value=4, key=0xa0b0c0d0),
     cmd(11, value=11), cmd(12, arg=3), cmd(12, arg=9), cmd(13, arg=1, tags=1), cmd(14, arg=2, value=0, tags=2), cmd(14, arg=2, value=1, tags=2), cmd(15),
     frame(0x0800, bytes(40))]
XE = [{"table": "IngressX.route", "match": {"hdr.ethernet.dst": "02:00:00:00:01:03"}, "action_name": "IngressX.to_port", "action_params": {"port": 3}}]
case("externs", "externs", "v1model's externs and simple_switch's paths: clones at ingress and egress with field lists, "
     "recirculation and resubmission keeping a field list, multicast with replica ids, truncate, drop, exit, stack push and pop, "
     "CRC-16, CRC-32, crc16_custom, identity, csum16 and xor16 hashes, a header assigned whole, stack elements picked at run time, a drop in egress, random, registers under @atomic, counters direct and indirect, "
     "log_msg, assert, assume, priorities and what egress sees of standard_metadata",
     [1, 2, 3], [{"port": 1, "frame": f} for f in X] + [{"port": 1, "frame": cmd(0, src=3)[:0] + (bytes([2, 0, 0, 0, 1, 3, 2, 0, 0, 0, 0, 1]) + b'\x88\xb6' + bytes(28)).hex()}],
     XE, extra={"clone_session_entries": [{"clone_session_id": 5, "replicas": [{"egress_port": 3, "instance": 1}]},
                                           {"clone_session_id": 6, "replicas": [{"egress_port": 3, "instance": 1}]}],
                "multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"egress_port": 2, "instance": 7},
                                                                                  {"egress_port": 3, "instance": 8}]}]},
     queues=8)

# profiles.p4
def flow(dst, sport, idx):
    return frame(0x88b6, struct.pack('!IIHHBB', ip('10.0.0.1'), dst, sport, 4791, 17, idx) + bytes(4))
F = [flow(ip('10.9.0.1'), 1, 0)] + [flow(ip('10.8.0.%d' % i), 1000 + i, 1) for i in range(12)] + \
    [flow(ip('10.7.0.1'), 7, 2) for _ in range(6)]
PE = [{"table": "IngressA.profiled", "match": {"hdr.flow.dst": "10.9.0.1"}, "member_id": 1},
      {"table": "IngressA.spread", "match": {"hdr.flow.dst": ["10.8.0.0", 16]}, "group_id": 1},
      {"table": "IngressA.spread", "match": {"hdr.flow.dst": ["10.7.0.0", 16]}, "member_id": 3},
      {"table": "IngressA.shaped", "match": {"hdr.flow.sport": 7}, "action_name": "IngressA.metered", "action_params": {},
       "meter": [[0.0001, 100], [0.0002, 200]]}]
case("profiles", "profiles", "an action profile, an action selector spreading flows over a group by CRC-16, an indirect "
     "meter and a direct one (bytes) marking a burst yellow and red",
     [1, 2, 3, 4], [{"port": 1, "frame": f} for f in F[:13]] + [{"port": 1, "frame": f, "burst": True} for f in F[13:]], PE,
     extra={"action_profile_members": [
                {"action_profile": "IngressA.profiled_members", "member_id": 1, "action_name": "IngressA.set_out", "action_params": {"port": 2, "tag": 0x101}},
                {"action_profile": "IngressA.spread_members", "member_id": 1, "action_name": "IngressA.set_out", "action_params": {"port": 2, "tag": 0x201}},
                {"action_profile": "IngressA.spread_members", "member_id": 2, "action_name": "IngressA.set_out", "action_params": {"port": 3, "tag": 0x202}},
                {"action_profile": "IngressA.spread_members", "member_id": 3, "action_name": "IngressA.set_out", "action_params": {"port": 4, "tag": 0x203}}],
            "action_profile_groups": [{"action_profile": "IngressA.spread_members", "group_id": 1, "members": [1, 2, 3]}],
            "meter_configs": [{"meter": "IngressA.policer", "index": 1, "rates": [[0.00001, 3], [0.00002, 5]]}]})

# ipv6.p4: fields over 64 bits.
import ipaddress
def v6(src, dst, hop=64, nh=17, sport=5000):
    body = struct.pack('!IHBB', (6 << 28), 8 + 8, nh, hop) + ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address(dst).packed
    if nh == 17:
        body += struct.pack('!HHHH', sport, 4791, 16, 0) + bytes(8)
    else:
        body += bytes(16)
    return frame(0x86dd, body)
S6 = [v6('2001:db8:ffff::1', '2001:db8::5'), v6('2001:db8:ffff::2', '2001:db8:1::7'), v6('2001:db8:aaaa::1', '2001:db9::1'),
      v6('2001:db8::5', '2001:db8::5'), v6('::1', '2001:db8::5'), v6('2001:db8:ffff::3', '2001:db8::6', hop=1),
      v6('2001:db8:ffff::4', '2001:db8::99'), v6('2001:db8:ffff::5', '2001:db8::5', nh=6), v6('2001:db8:ffff::6', '2001:db8::5', sport=7),
      v6('2001:db8:ffff::7', '2001:db8:1:ff::7'), v6('2001:db8:ffff::8', '2001:db8:ff00::1'),  # bits just past /48 and /32
      v6('2001:db8:aaaa::9', '2001:db8:ffff:ffff::1')]  # rewritten to 2001:db8:1:0:abcd::42 by a 128-bit parameter
E6 = [{"table": "Ingress6.route_v6", "match": {"hdr.ipv6.dst": ["2001:db8::", 32]}, "action_name": "Ingress6.to_port", "action_params": {"port": 2}},
      {"table": "Ingress6.route_v6", "match": {"hdr.ipv6.dst": ["2001:db8:1::", 48]}, "action_name": "Ingress6.to_port", "action_params": {"port": 3}},
      {"table": "Ingress6.acl_v6", "match": {"hdr.ipv6.src": ["2001:db8:ffff::", "ffff:ffff:ffff::"], "hdr.ipv6.next_hdr": 17},
       "priority": 1, "action_name": "Ingress6.set_class", "action_params": {"tc": 32}},
      {"table": "Ingress6.nat_v6", "match": {"hdr.ipv6.dst": "2001:db8:ffff:ffff::1"}, "action_name": "Ingress6.rewrite_dst",
       "action_params": {"addr": "2001:db8:1:0:abcd::42", "tc": 7}}]
case("ipv6", "ipv6", "fields over 64 bits: IPv6 addresses extracted and deparsed, LPM, ternary and exact tables on them, == and != "
     "between them and against constants, a swap through a 128-bit local, a rewrite from a 128-bit action parameter, "
     "a CRC-32 over both",
     [1, 2, 3], [{"port": 1, "frame": f} for f in S6], E6)
