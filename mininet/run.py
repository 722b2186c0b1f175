#!/usr/bin/python3
"""Run a p4lang tutorials topology.json in Mininet with p4rcm's switches and
host agents, and print each flow's completion time.

Each switch is a process (p4rcm's Go target, `p4ctl p4switch` or a
p4switch, or BMv2's simple_switch_grpc) started with no program; `p4ctl fabric apply` installs
rcm.p4 and its tables on all of them over P4Runtime; each host runs
`p4ctl host`, the RoCEv2 agent, on its interface. The run ends when every
flow of the flow file has completed (or at --timeout).

Mininet's global cleanup (`mn -c`) kills processes by name machine-wide:
this script never calls it. It stops only what it started, by PID, and
lets Mininet delete the links and namespaces of its own network, on errors
and Ctrl-C too.

Two runs on one machine never meet: the switches' P4Runtime ports are
free ones the kernel picks (unless --grpc-port-base is given, and then
each must be free), their device IDs and their interfaces' names carry
this run's process ID, and fabric apply programs a switch only once its
port is seen to belong to the switch process this run started.

Run it as root with Debian's python3 (Mininet is a Debian package):

    /usr/bin/python3 mininet/run.py --topology mininet/dumbbell.json \
        --flows mininet/dumbbell-flows.txt --out /tmp/mn-run
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


class Failure(Exception):
    """A run that cannot go on: one line for the user, exit 1."""


class Usage(Failure):
    """The script called wrongly (a bad file or flag): exit 2."""


class Interrupted(BaseException):
    """SIGINT, SIGTERM, SIGHUP or SIGPIPE: the run stops, removing what
    it made. A BaseException, as KeyboardInterrupt is, so that no handler
    of errors takes it for one."""

    def __init__(self, signum):
        BaseException.__init__(self, signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)


def on_signal(signum, frame):
    # Once: the cleanup that follows must not be cut short by another.
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise Interrupted(signum)


def load_topology(path):
    """The topology.json, or a Usage error naming the file, the line and
    what is wrong."""
    try:
        with open(path) as f:
            spec = json.load(f)
    except OSError as e:
        raise Usage('--topology %s: %s' % (path, e.strerror))
    except ValueError as e:
        raise Usage('--topology %s:%d:%d: not JSON: %s' % (path, e.lineno, e.colno, e.msg))
    if not isinstance(spec, dict):
        raise Usage('--topology %s: want a JSON object with hosts, switches and links' % path)
    for key in ('hosts', 'switches', 'links'):
        if not isinstance(spec.get(key), (dict, list)):
            raise Usage('--topology %s: no %s: a tutorials topology.json has hosts, switches and links' % (path, key))
    return spec


def check_fabric(p4ctl, topology):
    """The topology as p4ctl fabric apply reads it (duplicate addresses,
    links to nodes or ports that are not there, ...), checked before
    anything is made: p4ctl's own line on a Usage error."""
    r = subprocess.run([p4ctl, 'fabric', 'apply', '--topology', topology, '--check'], capture_output=True, text=True)
    if r.returncode == 2:
        raise Usage(r.stderr.strip())
    if r.returncode != 0:
        raise Failure(r.stderr.strip() or 'p4ctl fabric apply --check: exit %d' % r.returncode)


def free_ports(n):
    """n distinct TCP ports on 127.0.0.1 nothing listens on now. Each probe
    is held until all are chosen: a port is free again once its probe
    closes, and the kernel may hand it out twice, which would give two
    switches (or a switch's P4Runtime and Thrift servers) one port."""
    probes = []
    try:
        for _ in range(n):
            s = socket.socket()
            probes.append(s)
            s.bind(('127.0.0.1', 0))
        return [s.getsockname()[1] for s in probes]
    finally:
        for s in probes:
            s.close()


def port_free(port):
    """Whether a TCP port on 127.0.0.1 can be listened on now."""
    with socket.socket() as s:
        try:
            s.bind(('127.0.0.1', port))
            return True
        except OSError:
            return False


def run_tag():
    """This run's mark in its switches' names (and so their interfaces',
    which live in the root namespace beside other runs'): 'r' and the
    process ID in base 36, at most 6 characters."""
    n, digits = os.getpid(), ''
    while True:
        n, d = divmod(n, 36)
        digits = '0123456789abcdefghijklmnopqrstuvwxyz'[d] + digits
        if n == 0:
            return 'r' + digits


def listening_inodes(port):
    """The socket inodes listening on TCP port, this namespace's."""
    inodes = set()
    for path in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            f = open(path)
        except OSError:
            continue
        with f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == '0A' and int(fields[1].rsplit(':', 1)[1], 16) == port:
                    inodes.add(fields[9])
    return inodes


def owns_port(pid, port):
    """Whether process pid holds a socket listening on port."""
    inodes = listening_inodes(port)
    fd_dir = '/proc/%d/fd' % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith('socket:[') and target[8:-1] in inodes:
            return True
    return False


def tail(path, n=3):
    """The last n lines of a file, on one line."""
    try:
        with open(path) as f:
            return ' / '.join(l.strip() for l in f.readlines()[-n:] if l.strip())
    except OSError:
        return ''


class P4Switch(Switch):
    """A switch that is a P4 target process: p4switch or simple_switch_grpc,
    started with simple_switch_grpc's flags and no program (--no-p4), its
    P4Runtime server on 127.0.0.1:grpc_port. topo_name is its name in the
    topology.json; its Mininet name carries the run's tag."""

    def __init__(self, name, command=None, go=True, grpc_port=None, thrift_port=None, device_id=0, queue_rate=None,
                 queue_depth=None, log_dir=None, topo_name=None, tls=None, **params):
        Switch.__init__(self, name, **params)
        self.tls = tls
        self.command = command
        self.go = go
        self.grpc_port = grpc_port
        self.thrift_port = thrift_port
        self.device_id = device_id
        self.queue_rate = queue_rate
        self.queue_depth = queue_depth
        self.log_dir = log_dir
        self.topo_name = topo_name
        self.process = None

    def out_path(self):
        return os.path.join(self.log_dir, self.topo_name + '.out')

    def start(self, controllers):
        args = list(self.command)
        for port, intf in sorted(self.intfs.items()):
            if intf.name != 'lo':
                args += ['-i', '%d@%s' % (port, intf.name)]
        args += ['--device-id', str(self.device_id), '--thrift-port', str(self.thrift_port), '--no-p4']
        if self.go:
            args += ['--queue-rate', str(self.queue_rate), '--queue-depth', str(self.queue_depth)]
        args += ['--', '--grpc-server-addr', '127.0.0.1:%d' % self.grpc_port]
        if self.tls:
            # simple_switch_grpc's TLS flags; the policy is p4switch's own.
            args += ['--grpc-server-ssl', '--grpc-server-cacert', self.tls['cacert'],
                     '--grpc-server-cert', self.tls['switch_cert'], '--grpc-server-key', self.tls['switch_key'],
                     '--grpc-server-with-client-auth']
            if self.go:
                args += ['--grpc-server-policy', self.tls['policy']]
        out = open(self.out_path(), 'w')
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
    numbers; each switch as the plan says (its Mininet name, ports and
    device ID)."""

    def build(self, spec, plan, switch_opts):
        for name in sorted(spec['hosts'], key=natural_key):
            h = spec['hosts'][name]
            self.addHost(name, ip=h['ip'], mac=h['mac'])
        for name in sorted(spec['switches'], key=natural_key):
            p = plan[name]
            self.addSwitch(p['node'], cls=P4Switch, topo_name=name, grpc_port=p['grpc_port'],
                           thrift_port=p['thrift_port'], device_id=p['device_id'], **switch_opts)
        node = {name: plan[name]['node'] for name in plan}
        for link in spec['links']:
            (a, pa), (b, pb) = port_of(link[0]), port_of(link[1])
            self.addLink(node.get(a, a), node.get(b, b), port1=pa, port2=pb)


CONTROLLER = 'mininet run.py controller'


def make_credentials(directory):
    """A CA, the switches' certificate (for 127.0.0.1, where they serve),
    the controller's and a policy naming it, made for the run with
    openssl in directory, which the run removes at its end."""
    if shutil.which('openssl') is None:
        raise Usage('--ssl makes the run\'s certificates with openssl, which is not installed')

    def ossl(*args):
        r = subprocess.run(['openssl'] + list(args), cwd=directory, capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure('openssl %s: %s' % (args[0], r.stderr.strip()))

    ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
    ossl('req', '-x509', *ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=mininet run.py CA', '-days', '1')
    for name, cn, ext in (('switch', 'switch', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'),
                          ('controller', CONTROLLER, 'extendedKeyUsage=clientAuth\n')):
        with open(os.path.join(directory, name + '.ext'), 'w') as f:
            f.write(ext)
        ossl('req', *ec, '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=' + cn)
        ossl('x509', '-req', '-in', name + '.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
             '-out', name + '.crt', '-days', '1', '-extfile', name + '.ext')
    policy = os.path.join(directory, 'policy.json')
    with open(policy, 'w') as f:
        json.dump({'writers': ['cn:' + CONTROLLER]}, f)
    d = lambda n: os.path.join(directory, n)
    return {'cacert': d('ca.crt'), 'switch_cert': d('switch.crt'), 'switch_key': d('switch.key'),
            'cert': d('controller.crt'), 'key': d('controller.key'), 'policy': policy}


def plan_switches(spec, grpc_port_base):
    """Each switch's Mininet name, P4Runtime and Thrift ports and device
    ID: ports the kernel finds free, or from grpc_port_base on (each
    checked free), and device IDs no other run's fabric apply uses by
    default (its device IDs count from 0)."""
    tag = run_tag()
    plan = {}
    device_base = os.getpid() * 1000
    names = sorted(spec['switches'], key=natural_key)
    # Two ports a switch; with a base, only the Thrift ports are drawn, out
    # of the P4Runtime ports' range (of twice as many drawn, at most half
    # fall in it).
    reserved = range(grpc_port_base, grpc_port_base + len(names)) if grpc_port_base is not None else range(0)
    free = [p for p in free_ports(2 * len(names)) if p not in reserved]
    for i, name in enumerate(names):
        thrift = free.pop()
        if grpc_port_base is None:
            grpc = free.pop()
        else:
            grpc = grpc_port_base + i
            if not port_free(grpc):
                raise Failure('port %d (--grpc-port-base %d + %d, for %s) is taken, by another switch perhaps: '
                              "give another --grpc-port-base, or none to take free ports ('ss -ltnp sport = :%d' "
                              'names what holds it)' % (grpc, grpc_port_base, i, name, grpc))
        plan[name] = {'node': tag + name, 'grpc_port': grpc, 'thrift_port': thrift,
                      'device_id': device_base + i}
        if len(plan[name]['node']) > 10:
            raise Failure('switch %s: its name in Mininet, %s, leaves no room for its interfaces\' names '
                          '(15 characters): name it shorter in the topology' % (name, plan[name]['node']))
    return plan


def wait_for_switches(switches, timeout):
    """Wait until each switch process listens on its P4Runtime port: the
    port held by this process, not by whatever else may listen there. A
    switch that exits is an error, with the end of its output."""
    deadline = time.time() + timeout
    for sw in switches:
        while not owns_port(sw.process.pid, sw.grpc_port):
            if sw.process.poll() is not None:
                taken = ' (another process listens there)' if listening_inodes(sw.grpc_port) else ''
                raise Failure('switch %s exited before it served 127.0.0.1:%d%s: %s' % (
                    sw.topo_name, sw.grpc_port, taken, tail(sw.out_path()) or 'no output'))
            if time.time() > deadline:
                raise Failure('switch %s: no P4Runtime server of its own on 127.0.0.1:%d after %ds (%s)' % (
                    sw.topo_name, sw.grpc_port, timeout, sw.out_path()))
            time.sleep(0.1)


def count_flows(path):
    """The flow file's flow count (its first line)."""
    try:
        with open(path) as f:
            first = f.readline().split()
    except OSError as e:
        raise Usage('--flows %s: %s' % (path, e.strerror))
    if len(first) != 1 or not first[0].isdigit():
        raise Usage('--flows %s:1: want the number of flows, as the ns-3 simulator\'s flow files start' % path)
    return int(first[0])


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
    ap.add_argument('--p4switch', default='',
                    help="the p4switch binary (--switch go; default: the Go target built into --p4ctl, 'p4ctl p4switch')")
    ap.add_argument('--rate', default='', help='host line rate for the agents, e.g. 50M (default: p4ctl host\'s)')
    ap.add_argument('--queue-rate', type=int, default=8000, help='switch egress rate, packets per second (p4switch)')
    ap.add_argument('--queue-depth', type=int, default=4096,
                    help='switch egress queue depth, packets (p4switch): deeper than PFC lets a queue grow, '
                         'so that PFC, not a full queue, holds the senders')
    ap.add_argument('--scheme', '--cc', dest='scheme', default='dcqcn',
                    choices=['dcqcn', 'ldcp', 'hpcc', 'timely', 'dctcp', 'none'],
                    help='congestion control of the agents, and what fabric apply gives the switches for it '
                         '(hpcc: INT on every port; dctcp: its ECN threshold; ldcp: WRED and buf_max, PFC off)')
    ap.add_argument('--grpc-port-base', type=int, default=None,
                    help='P4Runtime port of the first switch, the next ones following, each of which must be free '
                         '(default: free ports the kernel picks)')
    ap.add_argument('--timeout', type=float, default=60, help='seconds to wait for the flows')
    ap.add_argument('--ssl', action='store_true',
                    help='P4Runtime over mutual TLS, with a CA and certificates made for the run (openssl) and removed '
                         'with it; on p4switch only the run\'s controller may be primary')
    args = ap.parse_args()

    # Everything that can be checked before anything is made.
    if os.geteuid() != 0:
        raise Usage('needs root: Mininet makes network namespaces and links')
    if args.scheme == 'hpcc' and args.switch != 'go':
        raise Usage('--scheme hpcc needs --switch go: its INT records carry the rate the ports run at, which '
                    'p4switch\'s --queue-rate sets and run.py does not set on BMv2')
    spec = load_topology(args.topology)
    total = count_flows(args.flows)
    if os.path.exists(args.out):
        raise Usage('--out %s exists: give a new directory (a run never writes over another\'s records)' % args.out)
    for binary in [args.p4ctl] + ([args.p4switch] if args.p4switch else []):
        if shutil.which(binary) is None:
            raise Usage('%s: no such program (give its path)' % binary)
    check_fabric(args.p4ctl, args.topology)
    plan = plan_switches(spec, args.grpc_port_base)
    os.makedirs(args.out)
    tls = None
    if args.ssl:
        tls_dir = tempfile.mkdtemp(prefix='p4rcm-mininet-tls')
        atexit_dirs.append(tls_dir)
        tls = make_credentials(tls_dir)
    if args.switch == 'bmv2':
        command = ['simple_switch_grpc']
    elif args.p4switch:
        command = [args.p4switch]
    else:
        command = [args.p4ctl, 'p4switch']
    topo = TutorialTopo(spec=spec, plan=plan, switch_opts={'command': command, 'go': args.switch == 'go',
                                                           'queue_rate': args.queue_rate,
                                                           'queue_depth': args.queue_depth, 'log_dir': args.out,
                                                           'tls': tls})
    # cleanup=False: never Mininet's global cleanup (see the top).
    net = Mininet(topo=topo, controller=None, autoSetMacs=False, autoStaticArp=False, build=False, cleanup=False)
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
        wait_for_switches(sorted(net.switches, key=lambda sw: natural_key(sw.topo_name)), 20)
        # The switches by address and device, as this run started them:
        # fabric apply reaches these and no others.
        targets = os.path.join(args.out, 'switches.json')
        reach = {}
        if tls:
            reach = {'ssl': True, 'cacert': tls['cacert'], 'cert': tls['cert'], 'private_key': tls['key']}
        with open(targets, 'w') as f:
            json.dump({name: dict({'addr': '127.0.0.1:%d' % p['grpc_port'], 'device_id': p['device_id']}, **reach)
                       for name, p in plan.items()}, f, indent=1)
        apply_cmd = [args.p4ctl, 'fabric', 'apply', '--topology', args.topology, '--switches', targets,
                     '--scheme', {'none': 'pfc'}.get(args.scheme, args.scheme)]
        if args.scheme == 'hpcc':
            # The records carry the rate the ports run at, the queue rate's
            # full frames (1,000-byte payloads, 1,086 bytes on the wire),
            # not the topology's link rates.
            apply_cmd += ['--int-rate', '%dbps' % (args.queue_rate * FRAME_WIRE_BYTES * 8)]
        apply = subprocess.run(apply_cmd, capture_output=True, text=True)
        print(apply.stdout, end='')
        if apply.returncode != 0:
            # p4ctl's line names the command already.
            raise Failure(apply.stderr.strip() or 'p4ctl fabric apply: exit %d' % apply.returncode)
        epoch = time.time_ns() + 500_000_000  # every agent up before the first flow
        for h in net.hosts:
            cmd = [args.p4ctl, 'host', '--topology', args.topology, '--host', h.name,
                   '--iface', h.intfList()[0].name, '--flows', args.flows, '--scheme', args.scheme,
                   '--epoch', str(epoch), '--out', os.path.join(args.out, h.name + '.jsonl')]
            if args.rate:
                cmd += ['--rate', args.rate]
            agents.append(h.popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        hosts = [h.name for h in net.hosts]
        deadline = time.time() + args.timeout
        while len(done_flows(args.out, hosts)) < total and time.time() < deadline:
            for a in agents:
                if a.poll() is not None:
                    raise Failure('an agent exited: ' + a.stderr.read().decode().strip())
            time.sleep(0.1)
        records = done_flows(args.out, hosts)
        print('%d of %d flows completed' % (len(records), total))
        for r in sorted(records, key=lambda r: r['flow']['id']):
            fl = r['flow']
            print('flow %d: %s -> node %d, %d bytes, FCT %.3f ms, %d CNPs, %d rate cuts, %d retransmits' % (
                fl['id'], r['host'], fl['dst'], fl['size_bytes'], r['fct_ns'] / 1e6,
                fl['cnps'], fl['rate_cuts'], fl['retransmits']))
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
        for d in atexit_dirs:
            shutil.rmtree(d, ignore_errors=True)


# A full data frame on the wire: 1,000 bytes of payload, RoCEv2's 62 bytes
# of headers, and 24 of FCS, preamble and gap (agent.WireExtra).
FRAME_WIRE_BYTES = 1086

# Directories the run made and removes at its end (its TLS credentials).
atexit_dirs = []


if __name__ == '__main__':
    setLogLevel('warning')
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    try:
        sys.exit(main())
    except Usage as e:
        print('run.py: %s' % e, file=sys.stderr)
        sys.exit(2)
    except Failure as e:
        print('run.py: %s' % e, file=sys.stderr)
        sys.exit(1)
    except Interrupted as e:
        if e.signum != signal.SIGPIPE:  # a word to a reader that is gone would be another
            print('run.py: interrupted (%s): the switches, agents and links it made are removed' % e, file=sys.stderr)
        # As a shell reports a command a signal ended, and p4ctl a run
        # one stopped: 128 + the signal's number (130 for Ctrl-C).
        sys.exit(128 + e.signum)
