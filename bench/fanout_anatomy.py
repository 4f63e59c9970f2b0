#!/usr/bin/env python3
"""Who ran where during each large fan-out, from an ftrace text trace of the scheduler
(`sched_switch`, `sched_waking`) recorded during `reachbench.py --only fanout` (bench/profile.sh
makes one):

    bench/fanout_anatomy.py TRACE

An event starts when a kworker wakes the sender (reachd's `reachd.netlink` thread, or
`fanout_floor`); the window ends when the reader (`fanout`) last ran within 40 ms. For each event:
when the sender's first `send` woke the reader, and whether the scheduler moved the reader onto
the sender's CPU then (`sched_migrate_task`, when traced); the sender's and the reader's CPU
time, how much of it they ran at the same time on the two CPUs, when the reader was done, and
how long a CPU sat idle meanwhile. Stdlib only.
"""
import collections
import re
import sys

SWITCH = re.compile(r"\[(\d+)\].*\s(\d+\.\d+): sched_switch: prev_comm=.*? prev_pid=\d+ .*?==> next_comm=(.*?) next_pid=\d+")
STAMP = re.compile(r"\s(\d+\.\d+):")
SENDERS = ("reachd.netlink", "fanout_floor")


def main():
    running = collections.defaultdict(list)     # task name -> [(start, end)]
    on_cpu = {}                                  # cpu -> (task name, since)
    starts = []                                  # (time, sender)
    first_wake = []                              # (time, waker's cpu, "moved" / "stayed")
    pending = None                               # a wake-up of the reader whose migration may follow
    for line in open(sys.argv[1], errors="replace"):
        if pending is not None:
            t, cpu = pending
            moved = "sched_migrate_task: comm=fanout " in line and f"dest_cpu={int(cpu)}" in line
            first_wake.append((t, "moved" if moved else "stayed"))
            pending = None
        m = SWITCH.search(line)
        if m:
            cpu, t, name = m.group(1), float(m.group(2)), m.group(3)
            if cpu in on_cpu:
                before, since = on_cpu[cpu]
                running[before].append((since, t))
            on_cpu[cpu] = (name, t)
            continue
        if "sched_waking: comm=fanout " in line and line.lstrip().startswith(SENDERS):
            pending = (float(STAMP.search(line).group(1)), re.search(r"\[(\d+)\]", line).group(1))
        if "sched_waking: comm=" in line and line.lstrip().startswith("kworker"):
            for sender in SENDERS:
                if f"comm={sender} " in line:
                    starts.append((float(STAMP.search(line).group(1)), sender))

    def within(name, a, b):
        return [(max(s, a), min(e, b)) for s, e in running[name] if e > a and s < b]

    def total(spans):
        return sum(e - s for s, e in spans)

    def overlap(x, y):
        return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in x for s2, e2 in y)

    print("sender          first send ms  reader  sender ms  reader ms  in parallel ms  reader done at ms  a CPU idle ms")
    for t, sender in starts:
        reader = within("fanout", t, t + 0.040)
        sent = within(sender, t, t + 0.040)
        if not reader or not sent:
            continue
        done = max(e for _, e in reader)
        woke = next(((w - t, how) for w, how in first_wake if t <= w <= t + 0.040), None)
        first = f"{woke[0] * 1e3:13.3f}  {woke[1]:6s}" if woke else f"{'?':>13s}  {'?':6s}"
        idle = total(within("swapper/0", t, done)) + total(within("swapper/1", t, done))
        print(f"{sender:15s} {first}  {total(sent) * 1e3:9.1f}  {total(reader) * 1e3:9.1f}  {overlap(sent, reader) * 1e3:14.1f}"
              f"  {(done - t) * 1e3:17.1f}  {idle * 1e3:13.1f}")


if __name__ == "__main__":
    main()
