#!/usr/bin/env python3
"""Splits reachd's per-event path into its steps from a `perf trace -p PID -e
recvmsg,sendto,write,epoll_wait,futex` log (bench/profile.sh makes one):
  epoll → recv   the Dispatch manager thread's epoll_wait returns until a thread reads netlink
                 (with a reader thread of its own, reachd has no such epoll_wait: the step is
                 then missing and the path starts at the read)
  recv → send    the monitor reads the messages, classifies, encodes the event and sendto()s it
                 to the subscriber (since the server shares the monitor's queue and publishes
                 before logging; older builds logged in between, with a thread hop after)
  send → log     the log line (fd 2), written after the send
Medians in ms. perf trace adds ~20 µs per traced system call, so read the proportions.
"""
import bisect
import re
import statistics
import sys

rows = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+|\?) \(\s*([\d.]+)? ?(?:ms)?\s*\): \S+?/(\d+)\s+(.*)", line)
    if m and m.group(1) != "?":
        rows.append((float(m.group(1)), float(m.group(2)) if m.group(2) else None, m.group(4)))
epoll = sorted(t + d for t, d, r in rows if "epoll_wait" in r and d is not None and r.rstrip().endswith("= 1"))
recv = sorted(t for t, d, r in rows if r.startswith("recvmsg") and "PEEK" in r and "EAGAIN" not in r)
log = sorted(t for t, d, r in rows if r.startswith("write(fd: 2"))
send = sorted(t for t, d, r in rows if r.startswith("sendto("))
steps = {"epoll → recv": [], "recv → send": [], "send → log": [], "total": []}
for s in send:
    j = bisect.bisect_right(recv, s) - 1
    if j < 0 or s - recv[j] > 5:
        continue
    while j > 0 and recv[j] - recv[j - 1] < 0.3:
        j -= 1
    r = recv[j]
    k = bisect.bisect_right(epoll, r) - 1
    e = epoll[k] if k >= 0 and r - epoll[k] < 1 else None
    steps["recv → send"].append(s - r)
    if e is not None:
        steps["epoll → recv"].append(r - e)
    i = bisect.bisect_left(log, s)
    if i < len(log) and log[i] - s < 1:
        steps["send → log"].append(log[i] - s)
    steps["total"].append(s - (e if e is not None else r))
n = len(steps["total"])
if not n:
    sys.exit("no complete event path found in the trace")
print(f"{n} events (medians, ms, under perf trace): " +
      ", ".join(f"{k} {statistics.median(v):.3f} ({len(v)})" for k, v in steps.items() if v))
