#!/usr/bin/python3
"""Run a p4lang tutorials topology.json in Mininet with p4rcm's switches and
host agents, and print each flow's completion time.

Each switch is a process (p4rcm's Go target, p4switch, or BMv2's
simple_switch_grpc) started with no program; `p4ctl fabric apply` installs
rcm.p4 and its tables on all of them over P4Runtime; each host runs
`p4ctl host`, the RoCEv2 agent, on its interface. The run ends when every
flow of the flow file has completed (or at --timeout).

Mininet's global cleanup (`mn -c`) kills processes by name machine-wide:
this script never calls it. It stops only what it started, by PID, and
lets Mininet delete the links and namespaces of its own network, on errors
and Ctrl-C too.

Run it as root with Debian's python3 (Mininet is a Debian package):

    /usr/bin/python3 mininet/run.py --topology mininet/dumbbell.json \
        --flows mininet/dumbbell-flows.txt --out /tmp/mn-run
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo



def natural_key(name):
    """h2 before h10, as p4ctl numbers the topology's nodes."""
    m = re.match(r'^(.*?)(\d+)$', name)
    return (m.group(1), int(m.group(2))) if m else (name, -1)


def port_of(end):
    """'s1-p2' -> ('s1', 2); 'h1' -> ('h1', None)."""
    m = re.match(r'^(.+)-p(\d+)$', end)
    return (m.group(1), int(m.group(2))) if m else (end, None)


class P4Switch(Switch):
    """A switch that is a P4 target process: p4switch or simple_switch_grpc,
    started with simple_switch_grpc's flags and no program (--no-p4), its
    P4Runtime server on 127.0.0.1:grpc_port."""

    def __init__(self, name, binary=None, grpc_port=None, device_id=0, queue_rate=None,
                 queue_depth=None, log_dir=None, **params):
        Switch.__init__(self, name, **params)
        self.binary = binary
        self.grpc_port = grpc_port
        self.device_id = device_id
        self.queue_rate = queue_rate
        self.queue_depth = queue_depth
        self.log_dir = log_dir
        self.process = None

    def start(self, controllers):
        args = [self.binary]
        for port, intf in sorted(self.intfs.items()):
            if intf.name != 'lo':
                args += ['-i', '%d@%s' % (port, intf.name)]
        args += ['--device-id', str(self.device_id), '--thrift-port', str(self.grpc_port + 1000), '--no-p4']
        if 'p4switch' in os.path.basename(self.binary):
            args += ['--queue-rate', str(self.queue_rate), '--queue-depth', str(self.queue_depth)]
        args += ['--', '--grpc-server-addr', '127.0.0.1:%d' % self.grpc_port]
        out = open(os.path.join(self.log_dir, self.name + '.out'), 'w')
        # Its own session, so that a Ctrl-C meant for this script reaches it
        # only through stop().
        self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        out.close()

    def stop(self, deleteIntfs=True):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        Switch.stop(self, deleteIntfs)


class TutorialTopo(Topo):
    """The hosts, switches and links of a topology.json, with its port
    numbers."""

    def build(self, spec, grpc_port_base, switch_opts):
        for name in sorted(spec['hosts'], key=natural_key):
            h = spec['hosts'][name]
            self.addHost(name, ip=h['ip'], mac=h['mac'])
        for i, name in enumerate(sorted(spec['switches'], key=natural_key)):
            # As p4ctl fabric apply numbers them: switch i (natural
            # order) at port base + i, device i.
            self.addSwitch(name, cls=P4Switch, grpc_port=grpc_port_base + i, device_id=i, **switch_opts)
        for link in spec['links']:
            (a, pa), (b, pb) = port_of(link[0]), port_of(link[1])
            self.addLink(a, b, port1=pa, port2=pb)


def wait_for_ports(ports, timeout):
    """Wait until every P4Runtime port accepts connections."""
    import socket
    deadline = time.time() + timeout
    for port in ports:
        while True:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=0.2).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError('no P4Runtime server on port %d after %ds' % (port, timeout))
                time.sleep(0.1)


def count_flows(path):
    """The flow file's flow count (its first line)."""
    with open(path) as f:
        return int(f.readline().split()[0])


def done_flows(out_dir, hosts):
    """The flow records the agents have written so far."""
    records = []
    for h in hosts:
        path = os.path.join(out_dir, h + '.jsonl')
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if 'flow' in r:
                    records.append(r)
    return records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--topology', required=True, help='tutorials topology.json')
    ap.add_argument('--flows', required=True, help='flows, ns-3 simulator format (node IDs: hosts in natural order from 0)')
    ap.add_argument('--out', required=True, help='directory for the agents\' records and the switches\' output (must not exist)')
    ap.add_argument('--switch', choices=['go', 'bmv2'], default='go', help='p4switch (go) or simple_switch_grpc (bmv2)')
    ap.add_argument('--p4ctl', default='p4ctl', help='the p4ctl binary')
    ap.add_argument('--p4switch', default='p4switch', help='the p4switch binary (--switch go)')
    ap.add_argument('--rate', default='', help='host line rate for the agents, e.g. 50M (default: p4ctl host\'s)')
    ap.add_argument('--queue-rate', type=int, default=8000, help='switch egress rate, packets per second (p4switch)')
    ap.add_argument('--queue-depth', type=int, default=4096,
                    help='switch egress queue depth, packets (p4switch): deeper than PFC lets a queue grow, '
                         'so that PFC, not a full queue, holds the senders')
    ap.add_argument('--cc', default='dcqcn', choices=['dcqcn', 'none'])
    ap.add_argument('--grpc-port-base', type=int, default=50051, help='P4Runtime port of the first switch; the next ones follow')
    ap.add_argument('--timeout', type=float, default=60, help='seconds to wait for the flows')
    args = ap.parse_args()

    with open(args.topology) as f:
        spec = json.load(f)
    os.makedirs(args.out)
    binary = args.p4switch if args.switch == 'go' else 'simple_switch_grpc'
    topo = TutorialTopo(spec=spec, grpc_port_base=args.grpc_port_base, switch_opts={'binary': binary, 'queue_rate': args.queue_rate,
                                                   'queue_depth': args.queue_depth, 'log_dir': args.out})
    net = Mininet(topo=topo, controller=None, autoSetMacs=False, autoStaticArp=False, build=False)
    agents = []
    try:
        net.build()
        for h in net.hosts:
            for intf in h.intfList():
                # The agents write whole frames on packet sockets; without
                # an address the hosts' kernels do not answer RoCE's UDP
                # with port-unreachable errors.
                h.cmd('ip addr flush dev', intf.name)
        net.start()
        switches = sorted(spec['switches'], key=natural_key)
        wait_for_ports([args.grpc_port_base + i for i in range(len(switches))], 20)
        apply = subprocess.run([args.p4ctl, 'fabric', 'apply', '--topology', args.topology,
                                '--grpc-port-base', str(args.grpc_port_base), '--device-id-base', '0'],
                               capture_output=True, text=True)
        print(apply.stdout, end='')
        if apply.returncode != 0:
            raise RuntimeError('p4ctl fabric apply: ' + apply.stderr.strip())
        epoch = time.time_ns() + 500_000_000  # every agent up before the first flow
        for h in net.hosts:
            cmd = [args.p4ctl, 'host', '--topology', args.topology, '--host', h.name,
                   '--iface', h.intfList()[0].name, '--flows', args.flows, '--cc', args.cc,
                   '--epoch', str(epoch), '--out', os.path.join(args.out, h.name + '.jsonl')]
            if args.rate:
                cmd += ['--rate', args.rate]
            agents.append(h.popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        total = count_flows(args.flows)
        hosts = [h.name for h in net.hosts]
        deadline = time.time() + args.timeout
        while len(done_flows(args.out, hosts)) < total and time.time() < deadline:
            for a in agents:
                if a.poll() is not None:
                    raise RuntimeError('an agent exited: ' + a.stderr.read().decode().strip())
            time.sleep(0.1)
        records = done_flows(args.out, hosts)
        print('%d of %d flows completed' % (len(records), total))
        for r in sorted(records, key=lambda r: r['flow']['ID']):
            fl = r['flow']
            print('flow %d: %s -> node %d, %d bytes, FCT %.3f ms, %d CNPs, %d rate cuts, %d retransmits' % (
                fl['ID'], r['host'], fl['Dst'], fl['Size'], r['fct_ns'] / 1e6,
                fl['CNPs'], fl['RateCuts'], fl['Retransmits']))
        return 0 if len(records) == total else 1
    finally:
        for a in agents:
            if a.poll() is None:
                a.send_signal(signal.SIGINT)
        for a in agents:
            try:
                a.wait(timeout=5)
            except subprocess.TimeoutExpired:
                a.kill()
                a.wait()
        net.stop()


if __name__ == '__main__':
    setLogLevel('warning')
    sys.exit(main())
