#!/usr/bin/env python3
"""reachd benchmarks: event latency against `ip monitor`, fan-out, flap storm, idle
wake-ups, footprint and start-up, and optionally NetworkManager / systemd-networkd.

Run through `make bench` (bench/run.sh), as root. Everything happens in network namespaces this
script creates (named rb<id>-a / rb<id>-b) and is removed on exit. Stdlib only.
"""
import argparse
import atexit
import json
import os
import platform
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nl  # noqa: E402
import vl  # noqa: E402
from nl import now, sh  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
LINK, PEER = "rb0", "rb0p"
ADDR, GW = "10.200.0.2/24", "10.200.0.1"
ADDR6, GW6 = "fd00:200::2/64", "fd00:200::1"

_children = []      # every process we start, killed on exit


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    _children.append(p)
    return p


def stop(p, timeout=5.0):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in _children:
        _children.remove(p)


def kill_children():
    for p in list(_children):
        try:
            stop(p, 2.0)
        except Exception:  # noqa: BLE001 - cleanup must go on
            pass


# ---------------------------------------------------------------------------------------------
# Statistics

def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def summary_ms(values):
    return {"n": len(values), "median_ms": statistics.median(values) * 1e3 if values else None,
            "p99_ms": pct(values, 99) * 1e3 if values else None,
            "min_ms": min(values) * 1e3 if values else None, "max_ms": max(values) * 1e3 if values else None}


# ---------------------------------------------------------------------------------------------
# Namespaces

class Topology:
    """ns A (where reachd runs): rb0 10.200.0.2/24, default route via 10.200.0.1; its veth peer
    rb0p sits in ns B. Toggling rb0 is an admin change, toggling rb0p a carrier change of rb0.
    With `ipv6` off (the default) IPv6 is disabled in both so that no DAD or router solicitation
    adds events of its own. With `ipv6` on (namespaces rb<id>-a6 / rb<id>-b6) both ends keep the
    kernel's IPv6 defaults (DAD, router solicitations) and get fd00:200::2/64 and ::1/64 besides:
    every change then also brings link-local and global address and route messages."""

    def __init__(self, run_id, ipv6=False):
        suffix = "6" if ipv6 else ""
        self.ipv6 = ipv6
        self.a, self.b = f"rb{run_id}-a{suffix}", f"rb{run_id}-b{suffix}"
        for ns in (self.a, self.b):
            sh(f"ip netns add {ns}")
            if ipv6:
                sh(f"ip netns exec {ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 "
                   f"net.ipv6.conf.default.accept_dad=1 net.ipv6.conf.default.router_solicitations=3")
            else:
                sh(f"ip netns exec {ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
            sh(f"ip -n {ns} link set lo up")
        # Distinct ifindexes on the two ends: the kernel's linkwatch treats a carrier change of a
        # device whose ifindex equals its iflink (a physical NIC, or a veth whose peer happens to
        # have the same index in its namespace) as non-urgent and delays it by up to 1 s.
        sh(f"ip -n {self.a} link add {LINK} index 10 type veth peer name {PEER} netns {self.b} index 20")
        sh(f"ip -n {self.a} addr add {ADDR} dev {LINK}")
        sh(f"ip -n {self.b} addr add {GW}/24 dev {PEER}")
        if ipv6:
            sh(f"ip -n {self.a} addr add {ADDR6} dev {LINK}")
            sh(f"ip -n {self.b} addr add {GW6}/64 dev {PEER}")
        sh(f"ip -n {self.a} link set {LINK} up")
        sh(f"ip -n {self.b} link set {PEER} up")
        self.restore()

    def restore(self):
        """Both ends up and the default route back (admin-down deletes it)."""
        sh(f"ip -n {self.a} link set {LINK} up")
        sh(f"ip -n {self.b} link set {PEER} up")
        self.reconfigure()

    def reconfigure(self):
        """What an admin down of rb0 deleted: the default route and (IPv6 on) the global IPv6
        address, which the kernel removes at down; link-local addresses come back by themselves."""
        sh(f"ip -n {self.a} route replace default via {GW} dev {LINK}")
        if self.ipv6:
            sh(f"ip -n {self.a} addr replace {ADDR6} dev {LINK}")

    def destroy(self):
        for ns in (self.a, self.b):
            sh(f"ip netns del {ns}", check=False)


# ---------------------------------------------------------------------------------------------
# The daemon under test

class Daemon:
    def __init__(self, args, ns, label, env=None, config_args=None, daemon_cmd=None):
        self.sock = os.path.join(OUT, f"{label}.sock")
        self.log_path = os.path.join(OUT, f"{label}.log")
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        config_args = args.daemon_config_args if config_args is None else config_args
        cmd = ["ip", "netns", "exec", ns] + (daemon_cmd or args.daemon_cmd) + ["--socket", self.sock] + config_args
        self.logf = open(self.log_path, "w")
        e = dict(os.environ)
        e.pop("NOTIFY_SOCKET", None)
        # reachd keeps its event numbers in $STATE_DIRECTORY, else (as root) /var/lib/reachd:
        # the benchmark's own, under bench/out, so that nothing is left on the machine.
        e.setdefault("STATE_DIRECTORY", os.path.join(OUT, "state"))
        os.makedirs(e["STATE_DIRECTORY"], exist_ok=True)
        e.update(env or {})
        self.t_spawn = now()
        self.proc = spawn(cmd, stdout=self.logf, stderr=subprocess.STDOUT, env=e)
        self.pid = self.proc.pid          # `ip netns exec` execs the daemon: same pid

    def wait_ready(self, timeout=30.0):
        return vl.wait_for_socket(self.sock, timeout, self.proc)

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"reachd exited with {self.proc.returncode}; see {self.log_path}")

    def cpu(self):
        return nl.proc_cpu(self.pid)

    def status(self):
        return nl.proc_status(self.pid)

    def log_text(self):
        self.logf.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        stop(self.proc)
        self.logf.close()


def daemon_started(args, ns, label, env=None, config_args=None, daemon_cmd=None):
    d = Daemon(args, ns, label, env, config_args, daemon_cmd)
    d.wait_ready()
    return d


# ---------------------------------------------------------------------------------------------
# Event latency: reachd subscriber vs `ip -ts monitor link`, same stamps, same select loop

IP_LINE = re.compile(r"^(?:\[[^\]]*\]\s*)?(?:Deleted\s+)?\d+:\s+([^:@\s]+)(?:@[^:]*)?:\s+<([^>]*)>")


class PipedProcess:
    """A child process whose standard output the harness reads without blocking."""

    def __init__(self, cmd, **kw):
        self.proc = spawn(cmd, stdout=subprocess.PIPE, bufsize=0, **kw)
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""

    def fileno(self):
        return self.fd

    def stop(self):
        stop(self.proc)


class IpMonitor(PipedProcess):
    def __init__(self, ns):
        super().__init__(["ip", "-n", ns, "-ts", "monitor", "link"])

    def lines(self):
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return []
        self.buf += data
        *full, self.buf = self.buf.split(b"\n")
        return [l.decode(errors="replace") for l in full]

    @staticmethod
    def flags_of(line, name):
        m = IP_LINE.match(line)
        if not m or m.group(1) != name:
            return None
        return set(m.group(2).split(","))


class Stamper(PipedProcess):
    """bench/stamp.c reading one side's bytes (reachd's subscriber socket or ip monitor's
    output, as its standard input) and stamping each read with CLOCK_MONOTONIC. The harness reads
    the records afterwards, so that it is not woken while the two sides are still at work."""

    def __init__(self, binary, source_fd):
        super().__init__([binary], stdin=source_fd)

    def chunks(self):
        """The records written so far: (stamp, bytes) for each read the stamper made."""
        try:
            while True:
                data = os.read(self.fd, 1 << 20)
                if not data:
                    break
                self.buf += data
        except BlockingIOError:
            pass
        out = []
        while True:
            head, sep, rest = self.buf.partition(b"\n")
            if not sep:
                break
            stamp, length = head.split()
            n = int(length)
            if len(rest) < n:
                break
            out.append((float(stamp), rest[:n]))
            self.buf = rest[n:]
        return out


def iface(status, name):
    for i in status.get("interfaces", []):
        if i.get("name") == name:
            return i
    return None


SELF_TIMING = re.compile(r"#\d+ timing: netlink read to event (\d+) µs, to the observers' return (\d+) µs")


def self_timing(log_path):
    """reachd's own timing of each event, from its debug log: median and p90 in µs."""
    event, sent = [], []
    with open(log_path, errors="replace") as f:
        for line in f:
            m = SELF_TIMING.search(line)
            if m:
                event.append(int(m.group(1)))
                sent.append(int(m.group(2)))
    if not event:
        return {"events": 0}
    return {"events": len(event), "event_median_us": statistics.median(event), "event_p90_us": pct(event, 90),
            "sent_median_us": statistics.median(sent), "sent_p90_us": pct(sent, 90)}


# The size of reachd's event in the latency benchmark's namespaces (two links), give or take a
# few bytes: the floor's events are padded to it.
LATENCY_FLOOR_EVENT_BYTES = 1500


def latency_run(args, topo, daemon, mode, count, gap):
    """`mode` "carrier": toggle the peer in ns B (rb0 loses/gains carrier; the default route stays).
    `mode` "admin": toggle rb0 itself; after each up the default route is re-added outside the
    timed path, so every down changes the status from ethernet to notReachable.

    How arrivals are stamped (`--stamp`): "reader" (the default): each side's bytes are read by a
    bench/stamp.c process of its own, which stamps every read, while the harness sleeps through
    the change (`settle`) and collects the records afterwards. "harness": the harness itself
    waits in select() on both sides and stamps what it reads; woken by the first arrival, it
    competes for the CPUs with the side still at work (on 2 cores it often preempts it)."""
    if args.ip_monitor_first:
        ipm = IpMonitor(topo.a)
        time.sleep(0.3)                               # ip monitor has subscribed
        sub, _ = vl.subscribe(daemon.sock)
    else:
        sub, _ = vl.subscribe(daemon.sock)
        ipm = IpMonitor(topo.a)
    stamped = args.stamp == "reader"
    if stamped:
        # The stampers read these descriptors blocking; the harness no longer reads them itself.
        sub.sock.setblocking(True)
        os.set_blocking(ipm.fd, True)
        r_src, i_src = Stamper(args.stamp_bin, sub.sock.fileno()), Stamper(args.stamp_bin, ipm.fd)
    else:
        sub.sock.setblocking(False)
    settle = min(gap / 2, 0.005)
    toggler = nl.LinkToggler(topo.b, PEER) if mode == "carrier" else nl.LinkToggler(topo.a, LINK)
    field, ipflag = ("carrier", "LOWER_UP") if mode == "carrier" else ("up", "UP")
    time.sleep(0.3)                                   # ip monitor has subscribed
    reach, ipmon, reasons, missed = [], [], {}, 0
    warmup = 6
    state = True

    def arrived(wait_until):
        """What each side delivered since the last call, as (stamp, bytes) chunks; waits for
        something to arrive until `wait_until`."""
        if stamped:
            select.select([r_src, i_src], [], [], max(0.0, wait_until - now()))
            return r_src.chunks(), i_src.chunks()
        ready, _, _ = select.select([sub, ipm], [], [], max(0.0, wait_until - now()))
        t = now()
        r, i = [], []
        if sub in ready:
            try:
                data = sub.sock.recv(1 << 20)
            except BlockingIOError:
                data = b""
            if data:
                r.append((t, data))
        if ipm in ready:
            try:
                data = os.read(ipm.fd, 1 << 16)
            except BlockingIOError:
                data = b""
            if data:
                i.append((t, data))
        return r, i

    def drain():
        if stamped:
            for _, data in r_src.chunks():
                sub.buf += data
            sub._split()
            for _, data in i_src.chunks():
                ipm.buf += data
            *_, ipm.buf = ipm.buf.split(b"\n")
            return
        try:
            while True:
                sub.feed()
        except (BlockingIOError, socket.timeout):
            pass
        ipm.lines()

    def wait_reachd(pred, timeout=3.0):
        deadline = now() + timeout
        while now() < deadline:
            r, i = arrived(deadline)
            # ip monitor's output read meanwhile stays in its buffer, so no line is cut.
            for _, data in i:
                ipm.buf += data
            for _, data in r:
                sub.buf += data
                for m in sub._split():
                    if "parameters" in m and pred(m["parameters"]["event"]):
                        return True
        return False

    for i in range(count + warmup):
        drain()
        state = not state
        t0 = toggler.set_up(state)
        if stamped:
            time.sleep(settle)
        # Only raw chunks while waiting: each keeps the stamp of the read that got it, and
        # nothing is parsed until both sides have a complete message, so parsing one side
        # never delays the stamp of the other.
        t_r = t_i = None
        reason = None
        r_chunks, i_chunks = [], []
        r_done = i_done = False
        deadline = t0 + 3.0
        while (t_r is None or t_i is None) and now() < deadline:
            rc, ic = arrived(deadline)
            r_chunks += rc
            i_chunks += ic
            r_done = r_done or any(b"\0" in data for _, data in rc)
            i_done = i_done or any(b"\n" in data for _, data in ic)
            if not (r_done and i_done):
                continue
            if t_r is None:
                for tc, data in r_chunks:
                    sub.buf += data
                    for m in sub._split():
                        ev = m.get("parameters", {}).get("event")
                        if ev and t_r is None:
                            li = iface(ev["current"], LINK)
                            if li is not None and li.get(field) == state:
                                t_r, reason = tc, ev["reason"]["code"]
                r_chunks, r_done = [], False
            if t_i is None:
                for tc, data in i_chunks:
                    ipm.buf += data
                    *full, ipm.buf = ipm.buf.split(b"\n")
                    for line in full:
                        fl = IpMonitor.flags_of(line.decode(errors="replace"), LINK)
                        if fl is not None and t_i is None and (ipflag in fl) == state:
                            t_i = tc
                i_chunks, i_done = [], False
            r_done = r_done or t_r is not None
            i_done = i_done or t_i is not None
        toggler.check_errors()
        daemon.check_alive()
        if t_r is None or t_i is None:
            missed += 1
            log(f"latency {mode} #{i}: {'reachd' if t_r is None else 'ip monitor'} saw nothing in 3 s")
        elif i >= warmup:
            reach.append(t_r - t0)
            ipmon.append(t_i - t0)
            reasons[reason] = reasons.get(reason, 0) + 1
        if mode == "admin" and state:
            topo.reconfigure()
            wait_reachd(lambda ev: ev["current"].get("status") != "notReachable")
        rest = t0 + gap - now()
        if rest > 0:
            time.sleep(rest)
    toggler.close()
    ipm.stop()
    sub.close()
    if stamped:
        r_src.stop()
        i_src.stop()
    topo.restore()
    r, m = summary_ms(reach), summary_ms(ipmon)
    ratios = [a / b for a, b in zip(reach, ipmon) if b > 0]
    return {"mode": mode, "changes": len(reach), "gap_ms": gap * 1e3, "missed": missed,
            "reachd": r, "ip_monitor": m, "reasons": reasons,
            "ratio_median": r["median_ms"] / m["median_ms"] if reach else None,
            "ratio_p99": r["p99_ms"] / m["p99_ms"] if reach else None,
            "median_of_pair_ratios": statistics.median(ratios) if ratios else None,
            "reachd_minus_ip_median_ms": statistics.median([a - b for a, b in zip(reach, ipmon)]) * 1e3 if reach else None}


def latency_rows(args, topologies, name, label, **daemon):
    """Carrier then admin changes against a fresh daemon in each topology (IPv6 off, then on):
    reachd, or with `daemon_cmd` another program in its place. `label(mode, ipv6)` names a row."""
    rows = []
    for t in topologies:
        d = daemon_started(args, t.a, f"{name}-ipv6" if t.ipv6 else name, **daemon)
        for mode in ("carrier", "admin"):
            log(f"{name}{', IPv6 on' if t.ipv6 else ''}: {args.changes} {mode} changes, {args.gap_ms} ms apart")
            l = latency_run(args, t, d, mode, args.changes, args.gap_ms / 1e3)
            l["label"], l["ipv6"] = label(mode, t.ipv6), t.ipv6
            rows.append(l)
        d.stop()
    return rows


# ---------------------------------------------------------------------------------------------
# Fan-out

class Fanout:
    def __init__(self, binary, sock, n):
        self.proc = spawn([binary, sock, str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""

    def line(self, timeout):
        deadline = now() + timeout
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.fd], [], [], max(0.0, deadline - now()))
            if not r:
                return None
            data = os.read(self.fd, 1 << 16)
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        stop(self.proc)


def fanout_run(args, topo, n, triggers, floor_bytes=None):
    """N subscribers of reachd; with `floor_bytes`, of bench/fanout_floor.c instead (events of that
    size, no daemon logic: the machine's floor for the same fan-out)."""
    if floor_bytes:
        d = daemon_started(args, topo.a, f"fanout{n}-floor", config_args=[],
                           daemon_cmd=[args.fanout_floor_bin, "--event-bytes", str(floor_bytes)])
    else:
        d = daemon_started(args, topo.a, f"fanout{n}")
    try:
        t_connect = now()
        fo = Fanout(args.fanout_bin, d.sock, n)
        line = fo.line(120)
        if line is None or not line.startswith("ready"):
            raise RuntimeError(f"fanout {n}: subscribers not ready ({line!r}); see {d.log_path}")
        connect_s = now() - t_connect
        time.sleep(0.5)
        rss = d.status()
        toggler = nl.LinkToggler(topo.b, PEER)
        lasts, firsts, events, errors, sizes = [], [], 0, [], []
        sampler = nl.ThreadSampler(d.pid)
        reader = nl.ThreadSampler(fo.proc.pid)
        state = True
        for i in range(triggers):
            state = not state
            t0 = toggler.set_up(state)
            got = None
            while True:
                line = fo.line(got is None and 10.0 or 0.15)
                if line is None:
                    break
                if line.startswith("event"):
                    _, seq, first, last, size = line.split()
                    events += 1
                    if got is None and float(first) >= t0:
                        got = (float(first) - t0, float(last) - t0)
                        sizes.append(int(size))
                elif line.startswith(("error", "closed")):
                    errors.append(line)
            d.check_alive()
            if fo.proc.poll() is not None:
                raise RuntimeError(f"fanout {n}: the subscriber process exited with {fo.proc.returncode}")
            if got is None:
                log(f"fanout {n} #{i}: no complete event within 10 s")
            else:
                firsts.append(got[0])
                lasts.append(got[1])
        toggler.check_errors()
        toggler.close()
        w = sampler.stop()
        wr = reader.stop()
        fo.stop()
        cpu_s, run_s = w["cpu_s_stat"], w["cpu_s_schedstat"]
        return {"subscribers": n, "floor": bool(floor_bytes), "event_bytes": statistics.median(sizes) if sizes else None,
                "triggers": triggers, "events": events, "connect_s": connect_s,
                "first": summary_ms(firsts), "last": summary_ms(lasts), "errors": errors[:5],
                "error_count": len(errors), "rss_kib": rss.get("VmRSS"),
                "cpu_ms_per_event_stat": cpu_s / events * 1e3 if events else None,
                "cpu_ms_per_event_schedstat": run_s / events * 1e3 if events else None,
                "reader_cpu_ms_per_event": wr["cpu_s_schedstat"] / events * 1e3 if events else None,
                "threads": w["threads_at_end"], "voluntary": w["voluntary"], "nonvoluntary": w["nonvoluntary"]}
    finally:
        d.stop()
        topo.restore()


# ---------------------------------------------------------------------------------------------
# Flap storm

class Collector(threading.Thread):
    """Reads a subscription as fast as possible on its own thread (so reachd never sees a slow
    subscriber) and parses afterwards."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.conn, self.initial = vl.subscribe(sock)
        self.conn.sock.settimeout(0.2)
        self.chunks, self.last_data, self.done = [], now(), False
        self.closed = None

    def run(self):
        while not self.done:
            try:
                data = self.conn.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError as e:
                self.closed = str(e)
                return
            if not data:
                self.closed = "EOF"
                return
            self.chunks.append(data)
            self.last_data = now()

    def messages(self):
        raw = b"".join(self.chunks)
        return [json.loads(m) for m in raw.split(b"\0") if m.strip()]

    def stop(self):
        self.done = True
        self.join(2)
        self.conn.close()


class LineCounter(threading.Thread):
    def __init__(self, proc):
        super().__init__(daemon=True)
        self.proc, self.count = proc, 0

    def run(self):
        for raw in self.proc.stdout:
            if IpMonitor.flags_of(raw.decode(errors="replace"), LINK) is not None:
                self.count += 1


class RuleToggler:
    """A kill switch flapping: a `prohibit` rule above main added and deleted, one `ip -batch`
    line each, as fast as ip sends them (the link togglers' interface)."""

    def __init__(self, ns):
        self.proc = spawn(["ip", "-n", ns, "-batch", "-"], stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def set_up(self, state):
        self.proc.stdin.write(b"rule del pref 100 prohibit\n" if state else b"rule add pref 100 prohibit\n")

    def check_errors(self):
        pass

    def close(self):
        self.proc.stdin.close()
        err = self.proc.stderr.read().decode(errors="replace").strip()
        if self.proc.wait() != 0:
            raise RuntimeError(f"ip -batch (rules) failed: {err[-300:]}")


def storm_run(args, topo, mode, changes):
    d = daemon_started(args, topo.a, f"storm-{mode}")
    try:
        col = Collector(d.sock)
        col.start()
        ip_err_path = os.path.join(OUT, f"storm-{mode}-ip-monitor.err")
        ip_err = open(ip_err_path, "w")
        ipp = spawn(["ip", "-n", topo.a, "monitor", "link"], stdout=subprocess.PIPE, stderr=ip_err)
        counter = LineCounter(ipp)
        counter.start()
        time.sleep(0.3)
        if mode == "rules":
            toggler = RuleToggler(topo.a)
        else:
            toggler = nl.LinkToggler(topo.b, PEER) if mode == "carrier" else nl.LinkToggler(topo.a, LINK)
        state = True
        sampler = nl.ThreadSampler(d.pid)
        t0 = now()
        for _ in range(changes):
            state = not state
            toggler.set_up(state)
        t_sent = now() - t0
        toggler.check_errors()
        toggler.close()
        # settle: no event for 1 s (at most 60 s)
        deadline = now() + 60
        while now() < deadline and now() - max(col.last_data, t0 + t_sent) < 1.0:
            time.sleep(0.1)
        settle_s = col.last_data - t0
        if d.proc.poll() is not None:
            col.stop()
            stop(ipp)
            return {"mode": mode, "changes": changes, "daemon_exited": d.proc.returncode,
                    "log_tail": d.log_text()[-1500:]}
        w = sampler.stop()
        drops, nl_socks = nl.netlink_drops(d.pid)
        running = vl.get_status(d.sock)
        st = d.status()
        col.stop()
        stop(ipp)
        ip_err.close()
        with open(ip_err_path) as f:
            ip_overruns = sum(1 for l in f if "No buffer space" in l)
        msgs = col.messages()
        events = [m["parameters"]["event"] for m in msgs if "parameters" in m and "event" in m.get("parameters", {})]
        errors = [m["error"] for m in msgs if "error" in m]
        reasons = {}
        for e in events:
            reasons[e["reason"]["code"]] = reasons.get(e["reason"]["code"], 0) + 1
        fresh_d = daemon_started(args, topo.a, f"storm-{mode}-fresh")
        fresh = vl.get_status(fresh_d.sock)
        fresh_d.stop()
        equal = vl.strip_times(running) == vl.strip_times(fresh)
        text = d.log_text()
        overrun_lines = [l for l in text.splitlines() if re.search(r"overrun|ENOBUFS|No buffer space|resync", l, re.I)]
        diff = None
        if not equal:
            a, b = vl.strip_times(running), vl.strip_times(fresh)
            diff = {k: {"running": a.get(k), "fresh": b.get(k)} for k in set(a) | set(b) if a.get(k) != b.get(k)}
        return {"mode": mode, "changes": changes, "send_s": t_sent, "settle_s": settle_s,
                "kernel_messages_seen_by_ip_monitor": counter.count, "ip_monitor_overruns": ip_overruns,
                "events": len(events), "reasons": reasons, "resyncs": reasons.get("resync", 0),
                "subscriber_errors": errors, "subscriber_closed": col.closed,
                "overrun_log_lines": len(overrun_lines), "overrun_log_sample": overrun_lines[:3],
                "netlink_drops": drops, "netlink_sockets": nl_socks,
                "final_equals_fresh": equal, "diff": diff,
                "final_status": running.get("status"), "cpu_s": w["cpu_s_stat"],
                "cpu_s_schedstat": w["cpu_s_schedstat"],
                "vmhwm_kib": st.get("VmHWM"), "rss_kib": st.get("VmRSS")}
    finally:
        d.stop()
        topo.restore()


# ---------------------------------------------------------------------------------------------
# Idle and footprint

def idle_run(args, topo, seconds):
    d = daemon_started(args, topo.a, "idle")
    try:
        sub, _ = vl.subscribe(d.sock)
        time.sleep(10)      # past start-up: Dispatch lets idle worker threads go after a few seconds
        sampler = nl.ThreadSampler(d.pid, period=0.5)
        time.sleep(seconds)
        w = sampler.stop()
        st = d.status()
        rollup = nl.smaps_rollup(d.pid)
        sub.sock.setblocking(False)
        extra = 0
        try:
            extra = len(sub.feed())
        except BlockingIOError:
            pass
        sub.close()
        return {"seconds": seconds, "cpu_ms": w["cpu_s_stat"] * 1e3, "cpu_ms_schedstat": w["cpu_s_schedstat"] * 1e3,
                "voluntary": w["voluntary"], "nonvoluntary": w["nonvoluntary"],
                "threads": w["threads_at_end"], "threads_at_start": w["threads_at_start"],
                "threads_born": w["threads_born"], "threads_gone": w["threads_gone"],
                "events_while_idle": extra, "rss_kib": st.get("VmRSS"), "vmhwm_kib": st.get("VmHWM"),
                "smaps_rollup_kib": rollup}
    finally:
        d.stop()


def startup_run(args, topo, runs):
    """Time from spawning `ip netns exec NS reachd` to READY=1 on our NOTIFY_SOCKET, and to the
    first GetStatus answer (polled every 2 ms in the same loop); plus what `ip netns exec NS true`
    alone costs, which both include."""
    ready, answer, notify_ok = [], [], True
    for i in range(runs):
        path = os.path.join(OUT, f"notify-{i}.sock")
        if os.path.exists(path):
            os.unlink(path)
        ns_sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        ns_sock.bind(path)
        d = Daemon(args, topo.a, f"startup{i}", env={"NOTIFY_SOCKET": path})
        t_ready = t_ans = None
        deadline = d.t_spawn + 15
        while now() < deadline and (t_ready is None or t_ans is None):
            if t_ans is not None and now() > t_ans + 2.0:
                break                                    # answers, but no READY=1 in 2 s
            r, _, _ = select.select([ns_sock], [], [], 0.002)
            if r:
                msg = ns_sock.recv(4096)
                if b"READY=1" in msg.split(b"\n") and t_ready is None:
                    t_ready = now()
            if t_ans is None and os.path.exists(d.sock):
                try:
                    vl.get_status(d.sock)
                    t_ans = now()
                except (OSError, RuntimeError, ValueError):
                    pass
            if d.proc.poll() is not None:
                raise RuntimeError(f"reachd exited with {d.proc.returncode} at start-up; see {d.log_path}")
        if t_ans is None:
            raise RuntimeError(f"reachd did not answer GetStatus within 15 s; see {d.log_path}")
        if t_ready is None:
            notify_ok = False
        else:
            ready.append(t_ready - d.t_spawn)
        answer.append(t_ans - d.t_spawn)
        d.stop()
        ns_sock.close()
        os.unlink(path)
    overhead = []
    for _ in range(runs):
        t = now()
        subprocess.run(["ip", "netns", "exec", topo.a, "true"], check=True)
        overhead.append(now() - t)
    oh = statistics.median(overhead)
    return {"runs": runs, "ready_notify": notify_ok and bool(ready),
            "ready_median_ms": statistics.median(ready) * 1e3 if ready else None,
            "ready_max_ms": max(ready) * 1e3 if ready else None,
            "getstatus_median_ms": statistics.median(answer) * 1e3,
            "ip_netns_exec_overhead_ms": oh * 1e3}


def stripped_sizes(reachd):
    """Bytes of reachd and reachctl (next to it) as `strip` leaves them, and as built."""
    out = {}
    for name in ("reachd", "reachctl"):
        path = os.path.join(os.path.dirname(os.path.abspath(reachd)), name)
        if not os.path.exists(path):
            continue
        stripped = os.path.join(OUT, f"{name}.stripped")
        r = subprocess.run(["strip", "-o", stripped, path], capture_output=True, text=True)
        out[name] = {"built_bytes": os.path.getsize(path),
                     "stripped_bytes": os.path.getsize(stripped) if r.returncode == 0 else None}
        if r.returncode == 0:
            os.unlink(stripped)
    return out


# ---------------------------------------------------------------------------------------------
# Report

def machine():
    def first(cmd):
        try:
            return sh(cmd, check=False).strip()
        except Exception:  # noqa: BLE001
            return "?"
    cpu = first("lscpu | sed -n 's/^Model name: *//p' | head -1")
    mem = first("free -g | awk '/Mem:/ {print $2}'")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "kernel": platform.release(),
            "os": first(". /etc/os-release && echo $PRETTY_NAME"),
            "swift": first("swift --version 2>&1 | head -1"),
            "commit": first(f"git -C {ROOT} rev-parse --short HEAD"),
            "loadavg": first("cut -d' ' -f1-3 /proc/loadavg"),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def fmt(v, digits=2):
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def table(res):
    rows = []
    m = res["machine"]
    rows.append(f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Linux {m['kernel']}, {m['os']}; "
                f"load average at start {m.get('loadavg', '?')}, at end {res.get('loadavg_end', '?')}")
    rows.append(f"reachd: {res['daemon']} (commit {m['commit']}, {res['build']} build), {m['date']}; "
                f"harness, reachd and ip monitor at nice {res.get('nice', 0)}")
    rows.append("")
    rows.append("| Event latency (trigger → arrival) | changes | reachd median | reachd p99 | ip monitor median | ip monitor p99 | ratio median | ratio p99 | median of (reachd − ip) per change |")
    rows.append("|---|---|---|---|---|---|---|---|---|")
    for l in res.get("latency", []):
        rows.append(f"| {l.get('label', l['mode'] + ' up/down')}, {fmt(l['gap_ms'], 0)} ms gap | {l['changes']} | {fmt(l['reachd']['median_ms'], 3)} ms | "
                    f"{fmt(l['reachd']['p99_ms'], 3)} ms | {fmt(l['ip_monitor']['median_ms'], 3)} ms | {fmt(l['ip_monitor']['p99_ms'], 3)} ms | "
                    f"{fmt(l['ratio_median'])}x | {fmt(l['ratio_p99'])}x | {fmt(l['reachd_minus_ip_median_ms'], 3)} ms |")
    for l in res.get("latency", []):
        sc = l.get("scraper")
        if sc:
            rows.append(f"| (scraper during that run: {sc.get('scrapes', '—')} scrapes of /metrics, {sc.get('failed', '—')} failed, "
                        f"median {fmt(sc.get('median_ms'), 1)} ms each) | | | | | | | | |")
        st = l.get("self_timing")
        if st and st.get("events"):
            rows.append(f"| (reachd's own timing in that run, {st['events']} events: netlink read → event median {fmt(st['event_median_us'], 0)} µs "
                        f"(p90 {fmt(st['event_p90_us'], 0)}), → observers' return (fan-out, metrics, STATUS=, log line) median {fmt(st['sent_median_us'], 0)} µs "
                        f"(p90 {fmt(st['sent_p90_us'], 0)})) | | | | | | | | |")
    for o in res.get("others", []):
        if "error" in o:
            rows.append(f"| {o['name']}: not measured — {o['error']} | | | | | | | | |")
            continue
        rows.append(f"| {o['name']} {o.get('version', '')}: carrier → D-Bus PropertiesChanged (in place of reachd) | {o['changes']} | "
                    f"{fmt(o['median_ms'], 3)} ms | {fmt(o['p99_ms'], 3)} ms | {fmt(o['ip_median_ms'], 3)} ms | {fmt(o['ip_p99_ms'], 3)} ms | "
                    f"{fmt(o['ratio_median'])}x | {fmt(o['p99_ms'] / o['ip_p99_ms'])}x | {fmt(o.get('minus_ip_median_ms'), 3)} ms |")
    rows.append("")
    rows.append("| Fan-out | trigger → first subscriber (median) | trigger → last subscriber (median) | p99 last | reachd CPU per event | reader CPU per event | reachd RSS | errors |")
    rows.append("|---|---|---|---|---|---|---|---|")
    for f in res.get("fanout", []):
        who = (f"{f['subscribers']} subscribers of `bench/fanout_floor.c`, the floor: events of {fmt(f['event_bytes'], 0)} bytes, no daemon logic "
               f"(its CPU in the reachd column)" if f.get("floor") else f"{f['subscribers']} subscribers")
        rows.append(f"| {who} ({f['triggers']} changes) | {fmt(f['first']['median_ms'], 3)} ms | {fmt(f['last']['median_ms'], 3)} ms | "
                    f"{fmt(f['last']['p99_ms'], 3)} ms | {fmt(f['cpu_ms_per_event_schedstat'], 3)} ms (stat: {fmt(f['cpu_ms_per_event_stat'], 1)} ms) | "
                    f"{fmt(f.get('reader_cpu_ms_per_event'), 3)} ms | {fmt((f['rss_kib'] or 0) / 1024, 1)} MiB | {f['error_count']} |")
    rows.append("")
    rows.append("| Flap storm | changes sent | sent in | kernel msgs (ip monitor) | reachd events | resyncs | netlink drops (overruns) | final = fresh dump | reachd CPU | peak RSS |")
    rows.append("|---|---|---|---|---|---|---|---|---|---|")
    for s in res.get("storm", []):
        if "daemon_exited" in s:
            rows.append(f"| {s['mode']} | {s['changes']} | reachd EXITED with {s['daemon_exited']} during the storm | | | | | | | |")
            continue
        ipo = f" (ip monitor overran {s['ip_monitor_overruns']}x)" if s.get("ip_monitor_overruns") else ""
        rows.append(f"| {s['mode']} | {s['changes']} | {fmt(s['send_s'], 3)} s | {s['kernel_messages_seen_by_ip_monitor']}{ipo} | {s['events']} | {s['resyncs']} | "
                    f"{s['netlink_drops']} | {'yes' if s['final_equals_fresh'] else 'NO'} | {fmt(s['cpu_s_schedstat'], 3)} s | {fmt(s['vmhwm_kib'] / 1024, 1)} MiB |")
    rows.append("")
    i = res.get("idle")
    if i:
        rows.append(f"Idle ({i['seconds']} s, 1 subscriber, connectivity check {'off' if res['config_applied'] else 'NOT disabled (no --config support)'}): "
                    f"CPU {fmt(i['cpu_ms_schedstat'], 3)} ms (stat {fmt(i['cpu_ms'], 0)} ms), context switches {i['voluntary']} voluntary + {i['nonvoluntary']} non-voluntary; "
                    f"threads {i['threads_at_start']} → {i['threads']} ({i['threads_born']} born, {i['threads_gone']} gone); events {i['events_while_idle']}")
    s = res.get("startup")
    fo = {f["subscribers"]: f for f in res.get("fanout", []) if not f.get("floor")}
    if i and s:
        rows.append(f"Footprint: RSS idle {fmt(i['rss_kib'] / 1024, 1)} MiB; with 1,000 subscribers {fmt(fo[1000]['rss_kib'] / 1024, 1) if fo.get(1000, {}).get('rss_kib') else '—'} MiB; "
                    f"start-up to {'READY=1' if s['ready_notify'] else 'first GetStatus answer (no READY=1 received)'} "
                    f"{fmt(s['ready_median_ms'] if s['ready_notify'] else s['getstatus_median_ms'], 1)} ms median of {s['runs']} "
                    f"(first GetStatus answer {fmt(s['getstatus_median_ms'], 1)} ms; includes `ip netns exec` ≈ {fmt(s['ip_netns_exec_overhead_ms'], 1)} ms)")
    if i and i.get("smaps_rollup_kib"):
        r = i["smaps_rollup_kib"]
        mib = lambda k: fmt(r.get(k, 0) / 1024, 1)
        rows.append(f"Memory after the idle minute (/proc/PID/smaps_rollup): Rss {mib('Rss')} MiB = "
                    f"shared {fmt((r.get('Shared_Clean', 0) + r.get('Shared_Dirty', 0)) / 1024, 1)} MiB (clean {mib('Shared_Clean')}, dirty {mib('Shared_Dirty')}) "
                    f"+ private {fmt((r.get('Private_Clean', 0) + r.get('Private_Dirty', 0)) / 1024, 1)} MiB (clean {mib('Private_Clean')}, dirty {mib('Private_Dirty')}); "
                    f"Anonymous {mib('Anonymous')} MiB, Pss {mib('Pss')} MiB")
    b = res.get("binaries")
    if b:
        rows.append("Binaries: " + "; ".join(
            f"{name} {fmt(v['stripped_bytes'] / 1e6 if v.get('stripped_bytes') else None, 1)} MB stripped "
            f"({fmt(v['built_bytes'] / 1e6, 1)} MB as built)" for name, v in b.items()))
    if res.get("pipeline"):
        rows.append("Event path outside the daemon (`bench/pipeline`: one carrier change applied to the table, its slice, the tracker, "
                    "the event's JSON, in a loop; medians, p90 in brackets): " + " ".join(res["pipeline"]))
    rows.append(f"Total benchmark wall time: {fmt(res.get('wall_s'), 0)} s")
    return "\n".join(rows)


def write_benchmarks_md(text, res):
    path = os.path.join(ROOT, "BENCHMARKS.md")
    begin, end = "<!-- figures:begin (written by make bench) -->", "<!-- figures:end -->"
    block = f"{begin}\n{text}\n\nRaw figures: `bench/out/results.json` of that run.\n{end}"
    old = open(path).read() if os.path.exists(path) else "# reachd benchmarks\n\n" + begin + "\n" + end + "\n"
    if begin in old and end in old:
        new = old.split(begin)[0] + block + old.split(end, 1)[1]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(new)


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reachd", help="path of the reachd binary")
    ap.add_argument("--fake", action="store_true", help="benchmark bench/fake_reachd.py (harness self-check)")
    ap.add_argument("--fanout-bin", default=os.path.join(OUT, "fanout"))
    ap.add_argument("--fanout-floor-bin", default=os.path.join(OUT, "fanout_floor"),
                    help="bench/fanout_floor.c's binary; the largest fan-out is run against it too (empty: not)")
    ap.add_argument("--pipeline-bin", default="", help="bench/pipeline's binary (bench/run.sh builds it)")
    ap.add_argument("--stamp-bin", default=os.path.join(OUT, "stamp"), help="bench/stamp.c's binary")
    ap.add_argument("--stamp", choices=["reader", "harness"], default="reader",
                    help="latency: who stamps each arrival: a bench/stamp.c reader per side while the "
                         "harness sleeps through the change (default), or the harness itself, woken by each")
    ap.add_argument("--build", default="release")
    ap.add_argument("--changes", type=int, default=200)
    ap.add_argument("--gap-ms", type=float, default=20.0)
    ap.add_argument("--fanout", default="1,100,1000,5000")
    ap.add_argument("--fanout-triggers", type=int, default=30)
    ap.add_argument("--storm", type=int, default=10000)
    ap.add_argument("--rule-storm", type=int, default=1000, help="rule adds/deletes of the rule storm")
    ap.add_argument("--idle", type=int, default=60)
    ap.add_argument("--startup-runs", type=int, default=5)
    ap.add_argument("--only", default="latency,latency-floor,fanout,storm,idle,startup,others,pipeline")
    ap.add_argument("--ip-monitor-first", action="store_true",
                    help="latency: start ip monitor before subscribing (with the floor's --resubscribe, "
                         "the kernel then hands each notification to the floor first)")
    ap.add_argument("--latency-floor-args", default="",
                    help="latency-floor: extra arguments of bench/fanout_floor.c, for experiments")
    ap.add_argument("--others-script", default=os.path.join(HERE, "others.py"))
    ap.add_argument("--no-write", action="store_true", help="don't touch BENCHMARKS.md")
    ap.add_argument("--nice", type=int, default=-10,
                    help="niceness for the harness and everything it starts (inherited): on a shared machine, "
                         "other jobs then disturb reachd and ip monitor alike less; 0 to leave it")
    ap.add_argument("--daemon-args", default="", help="extra reachd arguments, e.g. \"--log-level warning\"")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (network namespaces)")
    os.makedirs(OUT, exist_ok=True)
    if args.nice:
        os.nice(args.nice)
    run_id = os.environ.get("BENCH_ID", str(os.getpid()))
    t_start = now()

    if args.fake:
        args.daemon_cmd = [sys.executable, os.path.join(HERE, "fake_reachd.py")]
        label = "fake_reachd.py (harness self-check, NOT reachd)"
    else:
        if not args.reachd or not os.access(args.reachd, os.X_OK):
            sys.exit(f"bench: no reachd binary at {args.reachd!r}")
        args.daemon_cmd = [args.reachd]
        label = args.reachd
    conf = os.path.join(OUT, "bench.conf")
    base = "# written by bench/reachbench.py\n[Connectivity]\nEnabled=no\n\n[Cellular]\nModemManager=no\n"
    # The fan-out runs thousands of subscribers as one user: above the default per-user limit.
    limits = "\n[Limits]\nMaxConnections=16384\nMaxConnectionsPerUser=16384\n"
    with open(conf, "w") as f:
        f.write(base + limits)
    args.daemon_config_args = ["--config", conf] + args.daemon_args.split()
    config_applied = True
    if not args.fake:
        r = subprocess.run([args.reachd, "--config", conf, "--check-config"], capture_output=True, text=True)
        if r.returncode != 0:
            # A reachd from before [Limits]: it has no connection limits to raise.
            with open(conf, "w") as f:
                f.write(base)
        r = subprocess.run([args.reachd, "--config", conf, "--check-config"], capture_output=True, text=True)
        if r.returncode != 0:
            log(f"reachd does not take --config/--check-config ({r.returncode}: {(r.stderr or r.stdout).strip()[:200]}); running without")
            args.daemon_config_args = args.daemon_args.split()
            config_applied = False

    only = set(args.only.split(","))
    res = {"machine": machine(), "daemon": label, "build": args.build, "config_applied": config_applied,
           "nice": os.nice(0)}
    atexit.register(kill_children)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not args.fake:
        res["binaries"] = stripped_sizes(args.reachd)
    topo = Topology(run_id)
    extra_topologies = []
    try:
        if "latency" in only or "latency-floor" in only:
            res["latency"] = []
            # The same with IPv6 on both ends: each change also brings the address and route
            # messages of link-local and global addresses, DAD and router solicitations.
            topo6 = Topology(run_id, ipv6=True)
            extra_topologies.append(topo6)
            time.sleep(0.5)
        if "latency" in only:
            res["latency"] += latency_rows(args, (topo, topo6), "latency", lambda mode, six:
                                           f"{mode} up/down, IPv6 on (DAD, RS)" if six else f"{mode} up/down, IPv6 off")
        if "latency-floor" in only and args.fanout_floor_bin and os.access(args.fanout_floor_bin, os.X_OK) and not args.fake:
            # The same four rows with the C stand-in in reachd's place: woken by the same
            # netlink datagrams, it writes an event of reachd's size with nothing worked out.
            # What the machine gives any daemon against `ip monitor` in this harness.
            floor_cmd = [args.fanout_floor_bin, "--link-events", "--event-bytes", str(LATENCY_FLOOR_EVENT_BYTES)]
            floor_cmd += args.latency_floor_args.split()
            rows = latency_rows(args, (topo, topo6), "latency-floor", lambda mode, six:
                                f"`fanout_floor.c --link-events` (the floor, not reachd): {mode} up/down, IPv6 {'on' if six else 'off'}",
                                config_args=[], daemon_cmd=floor_cmd)
            for l in rows:
                l["floor"] = True
            res["latency"] += rows
        if "latency" in only:
            if not args.fake:
                # The same carrier changes while a scraper polls /metrics every 100 ms: the
                # responder runs on a queue of its own, so the events should not notice.
                conf_m = os.path.join(OUT, "bench-metrics.conf")
                with open(conf_m, "w") as f:
                    f.write(open(conf).read() + "\n[Metrics]\nListen=127.0.0.1:9464\n")
                d = daemon_started(args, topo.a, "latency-scraped",
                                   config_args=["--config", conf_m] + args.daemon_args.split())
                scraper = spawn(["ip", "netns", "exec", topo.a, sys.executable, os.path.join(HERE, "scraper.py"),
                                 "http://127.0.0.1:9464/metrics", "0.1"], stdout=subprocess.PIPE, text=True)
                time.sleep(0.5)
                log(f"latency: {args.changes} carrier changes, {args.gap_ms} ms apart, /metrics scraped every 100 ms")
                l = latency_run(args, topo, d, "carrier", args.changes, args.gap_ms / 1e3)
                scraper.send_signal(signal.SIGTERM)
                out, _ = scraper.communicate(timeout=10)
                try:
                    l["scraper"] = json.loads(out)
                except ValueError:
                    l["scraper"] = {"error": out[-200:]}
                l["label"] = "carrier up/down, /metrics scraped every 100 ms"
                res["latency"].append(l)
                d.stop()
                # Once more at debug level, where reachd logs each event's own timing: from the
                # start of its netlink read to the classified event, and to its observers' return (the
                # fan-out's sends, metrics, STATUS= and the log line done; a subscriber woken by its
                # send may run first, on a machine of 2 cores).
                d = daemon_started(args, topo.a, "latency-debug",
                                   config_args=["--config", conf] + args.daemon_args.split() + ["--log-level", "debug"])
                log(f"latency: {args.changes} carrier changes, {args.gap_ms} ms apart, reachd at debug level")
                l = latency_run(args, topo, d, "carrier", args.changes, args.gap_ms / 1e3)
                d.stop()
                l["label"] = "carrier up/down, reachd at --log-level debug"
                l["self_timing"] = self_timing(d.log_path)
                res["latency"].append(l)
        if "pipeline" in only and args.pipeline_bin and not args.fake:
            log("the event path outside the daemon (bench/pipeline)")
            out = subprocess.run([args.pipeline_bin], capture_output=True, text=True, timeout=300, check=True).stdout
            res["pipeline"] = [line for line in out.splitlines() if line.strip()]
        if "fanout" in only:
            res["fanout"] = []
            for n in [int(x) for x in args.fanout.split(",") if x]:
                log(f"fan-out: {n} subscribers")
                res["fanout"].append(fanout_run(args, topo, n, args.fanout_triggers))
            largest = max(res["fanout"], key=lambda f: f["subscribers"], default=None)
            if largest and args.fanout_floor_bin and os.access(args.fanout_floor_bin, os.X_OK) and not args.fake:
                n = largest["subscribers"]
                size = int(largest["event_bytes"] or 2048)
                log(f"fan-out: {n} subscribers of bench/fanout_floor.c, events of {size} bytes")
                res["fanout"].append(fanout_run(args, topo, n, args.fanout_triggers, floor_bytes=size))
        if "storm" in only:
            res["storm"] = []
            for mode in ("admin", "carrier", "rules"):
                count = args.rule_storm if mode == "rules" else args.storm
                log(f"flap storm: {count} {mode} changes")
                res["storm"].append(storm_run(args, topo, mode, count))
        if "startup" in only:
            log("start-up")
            res["startup"] = startup_run(args, topo, args.startup_runs)
        if "idle" in only:
            log(f"idle: {args.idle} s")
            res["idle"] = idle_run(args, topo, args.idle)
        if "others" in only and os.path.exists(args.others_script):
            log("NetworkManager / systemd-networkd comparison (time-boxed)")
            r = subprocess.run([sys.executable, args.others_script, "--id", run_id, "--changes", "100"],
                               capture_output=True, text=True, timeout=400)
            sys.stderr.write(r.stderr[-3000:])
            try:
                res["others"] = json.loads(r.stdout)
            except ValueError:
                res["others"] = [{"name": "others.py", "error": f"exit {r.returncode}"}]
    finally:
        kill_children()
        topo.destroy()
        for t in extra_topologies:
            t.destroy()
    res["wall_s"] = now() - t_start
    res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    res["loadavg_end"] = " ".join(res["loadavg_end"])
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
    text = table(res)
    print(text)
    if not args.no_write and not args.fake:
        write_benchmarks_md(text, res)


if __name__ == "__main__":
    main()
