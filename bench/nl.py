"""Raw rtnetlink and network-namespace helpers for the benchmarks (stdlib only).

The timed path never forks: a link change is one RTM_NEWLINK sent on a socket that was opened
inside the target namespace (setns(2) around socket(2)), stamped with CLOCK_MONOTONIC right
before send(2).
"""
import ctypes
import os
import socket
import struct
import subprocess
import time

CLONE_NEWNET = 0x40000000
NETLINK_ROUTE = 0
RTM_NEWLINK = 16
NLM_F_REQUEST = 0x1
NLM_F_ACK = 0x4
NLMSG_ERROR = 2
IFF_UP = 0x1

_libc = ctypes.CDLL(None, use_errno=True)


def now():
    """CLOCK_MONOTONIC in seconds (float), the clock of every stamp in the benchmarks."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def sh(cmd, check=True, quiet=False):
    """Runs a set-up command (never in a timed path)."""
    r = subprocess.run(cmd, shell=True, text=True, capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"`{cmd}` failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


class InNamespace:
    """`with InNamespace("ns"):` — the calling thread is in netns `ns` inside the block."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        try:
            if _libc.setns(target, CLONE_NEWNET) != 0:
                e = ctypes.get_errno()
                raise OSError(e, f"setns(/run/netns/{self.name}): {os.strerror(e)}")
        finally:
            os.close(target)
        return self

    def __exit__(self, *exc):
        if _libc.setns(self.home, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns(back home): {os.strerror(e)}")
        os.close(self.home)
        return False


def ifindex(ns, name):
    """The index of link `name` in namespace `ns` (set-up only)."""
    out = sh(f"ip -n {ns} -o link show dev {name}")
    return int(out.split(":", 1)[0])


class LinkToggler:
    """Sets IFF_UP on one link with a raw RTM_NEWLINK (no ACK requested, so the timed path is one
    sendto(2); the kernel still answers a failure with NLMSG_ERROR, which `check_errors` reads)."""

    def __init__(self, ns, link):
        self.ns, self.link = ns, link
        self.index = ifindex(ns, link)
        with InNamespace(ns):
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, NETLINK_ROUTE)
        self.sock.bind((0, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.seq = 0
        self._msgs = {up: self._message(up) for up in (True, False)}

    def _message(self, up):
        body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, self.index, IFF_UP if up else 0, IFF_UP)
        return struct.pack("=IHHII", 16 + len(body), RTM_NEWLINK, NLM_F_REQUEST, 0, 0) + body

    def set_up(self, up):
        """Sends the change and returns the CLOCK_MONOTONIC stamp taken right before send(2)."""
        msg = self._msgs[up]
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.sock.send(msg)
        return t0

    def check_errors(self):
        """Raises if the kernel refused any change sent so far."""
        while True:
            try:
                data = self.sock.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            off = 0
            while off + 16 <= len(data):
                length, mtype, _, _, _ = struct.unpack_from("=IHHII", data, off)
                if mtype == NLMSG_ERROR:
                    (err,) = struct.unpack_from("=i", data, off + 16)
                    if err != 0:
                        raise OSError(-err, f"RTM_NEWLINK {self.link} in {self.ns}: {os.strerror(-err)}")
                off += (length + 3) & ~3 if length else len(data)

    def close(self):
        self.sock.close()


def proc_cpu(pid):
    """(utime+stime in seconds from /proc/PID/stat, summed schedstat run time in seconds over the
    live threads, number of threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    run_ns, threads = 0, 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns += int(f.read().split()[0])
            threads += 1
        except (FileNotFoundError, ProcessLookupError):
            pass
    return cpu, run_ns / 1e9, threads


def proc_status(pid, keys=("VmRSS", "VmHWM")):
    """Selected /proc/PID/status values in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0])
    return out


def smaps_rollup(pid):
    """/proc/PID/smaps_rollup in KiB (Rss, Pss, Shared_*, Private_*, Anonymous, ...); {} if absent."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                parts = v.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out[k.strip()] = int(parts[0])
    except OSError:
        pass
    return out


def ctxt_switches(pid):
    """(voluntary, nonvoluntary) context switches summed over all live threads of `pid`."""
    vol = nonvol = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        nonvol += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return vol, nonvol


def task_counters(pid):
    """{tid: (run_ns, voluntary, nonvoluntary)} for every live thread of `pid`."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run = int(f.read().split()[0])
            vol = nonvol = 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        nonvol = int(line.split()[1])
            out[tid] = (run, vol, nonvol)
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass
    return out


class ThreadSampler:
    """Accumulates per-thread CPU time and context switches of a process over a window.

    /proc/PID/status counts only its own thread, and a thread that exits takes its counters
    with it; so every thread is sampled every `period` s and the per-thread deltas are summed.
    A thread born in the window counts from zero. What a thread did after the last sample before
    it exited is lost (at most `period`); `threads_seen`/`threads_gone` show the churn."""

    def __init__(self, pid, period=0.1):
        import threading
        self.pid, self.period = pid, period
        self.last = task_counters(pid)
        self.start_tids = set(self.last)
        self.run_ns = self.vol = self.nonvol = 0
        self.seen = set(self.last)
        self.stat0 = proc_cpu(pid)[0]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _sample(self):
        cur = task_counters(self.pid)
        for tid, (r, v, n) in cur.items():
            r0, v0, n0 = self.last.get(tid, (0, 0, 0))
            self.run_ns += r - r0
            self.vol += v - v0
            self.nonvol += n - n0
        self.seen |= set(cur)
        self.last = {**self.last, **cur}
        self.current = set(cur)

    def _loop(self):
        while not self._stop.wait(self.period):
            self._sample()

    def stop(self):
        self._stop.set()
        self._thread.join()
        self._sample()
        stat1 = proc_cpu(self.pid)[0]
        return {"cpu_s_schedstat": self.run_ns / 1e9, "cpu_s_stat": stat1 - self.stat0,
                "voluntary": self.vol, "nonvoluntary": self.nonvol,
                "threads_at_start": len(self.start_tids), "threads_at_end": len(self.current),
                "threads_born": len(self.seen - self.start_tids),
                "threads_gone": len(self.seen - self.current)}


def netlink_drops(pid):
    """Messages the kernel dropped on `pid`'s NETLINK_ROUTE sockets because their receive buffer
    was full (the Drops column of /proc/PID/net/netlink, i.e. the overruns the daemon saw)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    drops = sockets = 0
    with open(f"/proc/{pid}/net/netlink") as f:
        header = f.readline().split()
        for line in f:
            row = dict(zip(header, line.split()))
            if row.get("Inode") in inodes and row.get("Eth") == "0":
                drops += int(row.get("Drops", 0))
                sockets += 1
    return drops, sockets
