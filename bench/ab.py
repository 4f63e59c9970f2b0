#!/usr/bin/env python3
"""A/B of two reachd binaries, alternated (A B B A …), on figures a loaded machine does not move:
instructions per event (valgrind's callgrind: counters zeroed after start-up, dumped after the
changes), memory (/proc/PID/smaps_rollup: RSS and private dirty, idle and with subscribers) and,
with `--only cpu`, CPU per change (the run time of all of reachd's threads, schedstat, over
`--cpu-changes` carrier and admin changes). Each change is a carrier change of the benchmark's
veth (admin: of reachd's end); the harness waits for its event (a subscriber's sequence number),
never for a time. Static release builds (`make release`): valgrind dies on the dynamic ones.

    bench/ab.py A_REACHD B_REACHD [--rounds 2] [--changes 40] [--subscribers 1000] [--only cpu]

Root (network namespaces, like `make bench`). Prints one line per run and the medians.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nl  # noqa: E402
import vl  # noqa: E402
from reachbench import GW, LINK, OUT, PEER, Topology  # noqa: E402


def started(cmd, ns, label, conf):
    sock = os.path.join(OUT, f"ab-{label}.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    log = open(os.path.join(OUT, f"ab-{label}.log"), "w")
    # STATE_DIRECTORY: reachd's event numbers under bench/out, not in /var/lib/reachd.
    state = os.path.join(OUT, "state")
    os.makedirs(state, exist_ok=True)
    proc = subprocess.Popen(["ip", "netns", "exec", ns] + cmd + ["--socket", sock, "--config", conf],
                            stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, STATE_DIRECTORY=state))
    vl.wait_for_socket(sock, 120.0, proc)
    return proc, sock


def stop(proc):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def next_event(sub, last_sequence):
    """The sequence number of the subscriber's next event after `last_sequence`."""
    deadline = time.monotonic() + 30
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no event after sequence {last_sequence}")
        event = sub.read_one()["parameters"]["event"]
        if event["sequence"] > last_sequence:
            return event["sequence"]


def changes(topo, sub, count, last_sequence, admin=False):
    """`count` carrier changes of rb0 (admin: of rb0 itself, down and up, the default route put
    back after each up, its event waited for too), each waited for as the next sequence number."""
    toggler = nl.LinkToggler(topo.a, LINK) if admin else nl.LinkToggler(topo.b, PEER)
    try:
        for i in range(count):
            toggler.set_up(i % 2 == 1)
            last_sequence = next_event(sub, last_sequence)
            if admin and i % 2 == 1:
                nl.sh(f"ip -n {topo.a} route replace default via {GW} dev {LINK}")
                last_sequence = next_event(sub, last_sequence)
        toggler.check_errors()
    finally:
        toggler.close()
    if count % 2 == 1:
        topo.restore()
    return last_sequence


def cpu(binary, topo, label, conf, count):
    """µs of reachd's CPU (all threads, schedstat) per carrier change and per admin change (the
    route put back after an up counts with it), each waited for; after 4 changes of each."""
    proc, sock = started([binary], topo.a, label, conf)
    try:
        sub, initial = vl.subscribe(sock)
        sequence = initial["sequence"]
        row = {}
        for mode in ("carrier", "admin"):
            sequence = changes(topo, sub, 4, sequence, admin=mode == "admin")
            sampler = nl.ThreadSampler(proc.pid)
            sequence = changes(topo, sub, count, sequence, admin=mode == "admin")
            row[f"cpu_us_per_{mode}_change"] = sampler.stop()["cpu_s_schedstat"] / count * 1e6
        sub.close()
    finally:
        stop(proc)
    return row


def instructions(binary, topo, label, conf, count, subscribers):
    """Instructions per event, all threads, counted by callgrind between zero and dump, with one
    subscriber read and `subscribers` more that are not (their queues hold the changes)."""
    out = os.path.join(OUT, f"ab-{label}.callgrind")
    for f in os.listdir(OUT):
        if f.startswith(f"ab-{label}.callgrind"):
            os.unlink(os.path.join(OUT, f))
    proc, sock = started(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary], topo.a, label, conf)
    try:
        sub, initial = vl.subscribe(sock, timeout=60)
        more = [vl.subscribe(sock, timeout=60)[0] for _ in range(subscribers)]
        sequence = changes(topo, sub, 4, initial["sequence"])          # every path run once
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
        changes(topo, sub, count, sequence)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        for c in more:
            c.close()
        sub.close()
    finally:
        stop(proc)
    dumps = [os.path.join(OUT, f) for f in os.listdir(OUT) if f.startswith(f"ab-{label}.callgrind.")]
    latest = max(dumps, key=os.path.getmtime)
    with open(latest) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]) / count
    raise RuntimeError(f"no totals in {latest}")


def memory(binary, topo, label, conf, count, subscribers):
    """smaps_rollup after 10 s idle with one subscriber, after `count` changes, and with
    `subscribers` more subscribers after `count` more changes; minor faults per change."""
    proc, sock = started([binary], topo.a, label, conf)
    try:
        sub, initial = vl.subscribe(sock)
        time.sleep(10)      # past start-up: what an idle daemon holds
        idle = nl.smaps_rollup(proc.pid)
        faults0 = int(open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[7])
        sequence = changes(topo, sub, count, initial["sequence"])
        faults = int(open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[7]) - faults0
        after = nl.smaps_rollup(proc.pid)
        many = [vl.subscribe(sock)[0] for _ in range(subscribers)]
        changes(topo, sub, count, sequence)
        for c in many:      # every one of them got the events
            while c.read_one()["parameters"]["event"]["sequence"] < sequence + count:
                pass
        loaded = nl.smaps_rollup(proc.pid)
        for c in many:
            c.close()
        sub.close()
    finally:
        stop(proc)
    mib = lambda r, *keys: sum(r.get(k, 0) for k in keys) / 1024  # noqa: E731
    return {"idle_rss": mib(idle, "Rss"), "idle_private_dirty": mib(idle, "Private_Dirty"),
            "idle_private": mib(idle, "Private_Clean", "Private_Dirty"),
            "events_rss": mib(after, "Rss"), "events_private_dirty": mib(after, "Private_Dirty"),
            "faults_per_change": faults / count,
            "subs_rss": mib(loaded, "Rss"), "subs_private_dirty": mib(loaded, "Private_Dirty")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--changes", type=int, default=40)
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--instruction-subscribers", type=int, default=0,
                    help="subscribers besides the one read while instructions are counted")
    ap.add_argument("--extra-links", type=int, default=0,
                    help="veth pairs added (up, with an address) beside the uplink: more interfaces per status")
    ap.add_argument("--cpu-changes", type=int, default=1000, help="changes of each kind for `cpu`")
    ap.add_argument("--only", default="instructions,memory", help="instructions, memory, cpu")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("ab: needs root (network namespaces)")
    os.makedirs(OUT, exist_ok=True)
    # A binary written moments ago sits in dirty page-cache pages, which smaps counts as private
    # dirty in every process that maps them: written back first, it is clean.
    os.sync()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    conf = os.path.join(OUT, "ab.conf")
    with open(conf, "w") as f:
        f.write("[Connectivity]\nEnabled=no\n\n[Cellular]\nModemManager=no\n\n"
                "[Limits]\nMaxConnections=16384\nMaxConnectionsPerUser=16384\n")
    topo = Topology(f"ab{os.getpid()}")
    for i in range(args.extra_links):
        nl.sh(f"ip -n {topo.a} link add abx{i} type veth peer name aby{i}")
        nl.sh(f"ip -n {topo.a} addr add 10.201.{i}.1/24 dev abx{i}")
        nl.sh(f"ip -n {topo.a} link set abx{i} up")
        nl.sh(f"ip -n {topo.a} link set aby{i} up")
    results = {"A": [], "B": []}
    only = set(args.only.split(","))
    try:
        order = []
        for r in range(args.rounds):
            order += ["A", "B"] if r % 2 == 0 else ["B", "A"]
        for side in order:
            binary = args.a if side == "A" else args.b
            row = {}
            if "instructions" in only:
                row["instructions_per_event"] = instructions(binary, topo, f"{os.getpid()}{side}", conf, args.changes,
                                                             args.instruction_subscribers)
            if "cpu" in only:
                row.update(cpu(binary, topo, f"{os.getpid()}{side}", conf, args.cpu_changes))
            if "memory" in only:
                row.update(memory(binary, topo, f"{os.getpid()}{side}", conf, args.changes, args.subscribers))
            results[side].append(row)
            print(side, " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                  flush=True)
    finally:
        topo.destroy()
    for side in ("A", "B"):
        keys = results[side][0].keys()
        print(f"{side} median:", " ".join(f"{k}={statistics.median(r[k] for r in results[side]):.2f}" for k in keys))


if __name__ == "__main__":
    main()
