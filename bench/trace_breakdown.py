#!/usr/bin/env python3
"""Splits reachd's per-event path into its steps from a `perf trace -p PID -e
recvmsg,sendto,write,epoll_wait,futex` log (bench/profile.sh makes one):
  epoll → recv   the Dispatch manager thread's epoll_wait returns until a worker thread reads netlink
  recv → log     the monitor reads the messages, classifies and writes its log line (fd 2)
  log → send     hop to the server's queue, JSON encoding, sendto() to the subscriber
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
steps = {"epoll → recv": [], "recv → log": [], "log → send": [], "total": []}
for s in send:
    i = bisect.bisect_right(log, s) - 1
    if i < 0:
        continue
    w = log[i]
    j = bisect.bisect_right(recv, w) - 1
    if j < 0:
        continue
    while j > 0 and recv[j] - recv[j - 1] < 0.3:
        j -= 1
    r = recv[j]
    k = bisect.bisect_right(epoll, r) - 1
    if k < 0 or s - epoll[k] > 5:
        continue
    e = epoll[k]
    for key, v in (("epoll → recv", r - e), ("recv → log", w - r), ("log → send", s - w), ("total", s - e)):
        steps[key].append(v)
n = len(steps["total"])
if not n:
    sys.exit("no complete event path found in the trace")
print(f"{n} events (medians, ms, under perf trace): " +
      ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in steps.items()))
