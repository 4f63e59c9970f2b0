#!/usr/bin/env python3
"""A Prometheus stand-in for `make bench`: GET URL every INTERVAL seconds until SIGTERM, then
print {"scrapes", "failed", "bytes", "median_ms"} as JSON. Run it in the daemon's namespace."""
import json
import signal
import statistics
import sys
import time
import urllib.request

url, interval = sys.argv[1], float(sys.argv[2])
ok, failed, size, times = 0, 0, 0, []
running = True


def stop(*_):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
next_at = time.monotonic()
while running:
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            size += len(answer.read())
        ok += 1
        times.append(time.monotonic() - start)
    except Exception:
        failed += 1
    next_at += interval
    time.sleep(max(0.0, next_at - time.monotonic()))
print(json.dumps({"scrapes": ok, "failed": failed, "bytes": size,
                  "median_ms": statistics.median(times) * 1e3 if times else None}))
