#!/usr/bin/env python3
"""The anatomy of each latency change, from an ftrace text trace (bench/profile.sh makes one):

    bench/anatomy.py TRACE

The trace holds the scheduler's `sched_waking`/`sched_switch` events and the system calls
`sendto`, `recvfrom`, `write` and the return of `poll`, of the whole machine, during a latency
run (`reachbench.py --only latency`). A change starts at the harness's `sendto` of its 32-byte
RTM_NEWLINK (a `python3` task); from there, for `ip monitor` (task `ip`) and for reachd's
netlink reader (task `reachd.netlink`): when the kernel woke it, when it got a CPU, when it
wrote its line (`ip`) or sent the event to the subscriber (reachd's first `sendto` after its
read). Medians over the changes, with the 10th and 90th percentiles, in µs; tracing itself adds
a few µs to each traced call. Stdlib only.
"""
import re
import statistics
import sys

STAMP = re.compile(r"\s(\d+\.\d+):")
TRIGGER = re.compile(r"sys_sendto\(fd: 0x[0-9a-f]+, buff: \S+, len: 0x20,")


def stamp(line):
    m = STAMP.search(line)
    return float(m.group(1)) if m else None


def task(line):
    return line[:24].strip()


def changes(lines, window=0.003):
    starts = [i for i, l in enumerate(lines) if task(l).startswith("python3-") and TRIGGER.search(l)]
    for i in starts:
        t0 = stamp(lines[i])
        seen = {}
        for line in lines[i + 1:]:
            t = stamp(line)
            if t is None:
                continue
            if t > t0 + window:
                break
            who = task(line)
            if "sched_waking: comm=ip " in line:
                seen.setdefault("ip woken", t)
                seen.setdefault("ip cpu", re.search(r"target_cpu=(\d+)", line).group(1))
            elif "sched_waking: comm=reachd.netlink " in line:
                seen.setdefault("reachd woken", t)
                seen.setdefault("reachd cpu", re.search(r"target_cpu=(\d+)", line).group(1))
            elif "next_comm=ip " in line and "ip woken" in seen:
                seen.setdefault("ip running", t)
            elif "next_comm=reachd.netlink " in line and "reachd woken" in seen:
                seen.setdefault("reachd running", t)
            elif re.match(r"ip-\d+$", who) and "sys_write(fd: 1," in line:
                seen.setdefault("ip wrote", t)
            elif who.startswith("reachd.netlink-") and "sys_poll ->" in line:
                seen.setdefault("reachd polled", t)
            elif who.startswith("reachd.netlink-") and "sys_recvfrom(" in line:
                seen.setdefault("reachd read", t)
            elif who.startswith("reachd.netlink-") and "sys_sendto(" in line and "reachd read" in seen:
                seen.setdefault("reachd sent", t)
        # Running may be recorded as the poll's return when the reader was switched in before
        # the wake-up was traced (it was already on its way to the CPU).
        seen.setdefault("reachd running", seen.get("reachd polled"))
        need = ("ip woken", "ip running", "ip wrote", "reachd woken", "reachd running", "reachd read", "reachd sent")
        if all(seen.get(k) is not None for k in need):
            seen["t0"] = t0
            yield seen


def main():
    rows = list(changes(open(sys.argv[1], errors="replace").read().splitlines()))
    if not rows:
        sys.exit("anatomy: no complete change in the trace")

    def line(label, f):
        v = sorted(f(r) * 1e6 for r in rows)
        print(f"  {label:44s} {statistics.median(v):7.1f}  ({v[len(v) // 10]:.1f} – {v[len(v) * 9 // 10]:.1f})")

    same = sum(r["ip cpu"] == r["reachd cpu"] for r in rows)
    first = sum(r["reachd running"] < r["ip running"] for r in rows)
    print(f"{len(rows)} changes; ip monitor and reachd woken onto the same CPU in {same}; reachd ran first in {first}")
    print("  step (µs, median (p10 – p90))")
    line("trigger → ip monitor woken", lambda r: r["ip woken"] - r["t0"])
    line("trigger → reachd woken", lambda r: r["reachd woken"] - r["t0"])
    line("ip monitor: woken → running", lambda r: r["ip running"] - r["ip woken"])
    line("ip monitor: running → line written", lambda r: r["ip wrote"] - r["ip running"])
    line("reachd: woken → running", lambda r: r["reachd running"] - r["reachd woken"])
    line("reachd: running → first read", lambda r: r["reachd read"] - r["reachd running"])
    line("reachd: first read → event sent", lambda r: r["reachd sent"] - r["reachd read"])
    line("reachd sent − ip monitor wrote", lambda r: r["reachd sent"] - r["ip wrote"])


if __name__ == "__main__":
    main()
