#!/usr/bin/env python3
"""The connectivity check's cost per interval with one family and with two.

reachd (the binary given) runs in a namespace on a veth to a second namespace that holds the
check server and the resolver (the python servers of Sources/TestSupport, taken from their Swift
source). `reachctl probe` is asked N times, each a fresh check (ProbeMinInterval=100ms, asked
every 0.3 s); the figures are the daemon's CPU time (utime + stime from /proc) and the bytes on
the uplink (both directions) per check, with the uplink carrying IPv4 alone (one family
checked) and then IPv4 and IPv6 (two). Usage (root):
    bench/families.py --reachd .build/release/reachd --reachctl .build/release/reachctl [-n 40]
"""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def script(swift_file):
    text = open(os.path.join(ROOT, "Sources/TestSupport", swift_file)).read()
    return re.search(r'static let script = #"""\n(.*?)\n"""#', text, re.S).group(1)


def sh(command):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)


def uplink_bytes(ns):
    out = subprocess.run(["ip", "-n", ns, "-s", "link", "show", "up0"], capture_output=True, text=True).stdout.split("\n")
    rx = int(out[3].split()[0]); tx = int(out[5].split()[0])
    return rx + tx


def cpu_ticks(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def run(args, dual):
    tag = "rbf%d%s" % (os.getpid(), "d" if dual else "s")
    host, up = tag + "h", tag + "u"
    work = tempfile.mkdtemp(prefix="reachd-families-")
    processes = []
    try:
        for ns in (host, up):
            sh("ip netns add %s && ip -n %s link set lo up" % (ns, ns))
        sh("ip -n %s link add eth0 type veth peer name up0 netns %s" % (host, up))
        sh("ip -n %s addr add 10.77.0.1/24 dev up0 && ip -n %s link set up0 up" % (up, up))
        sh("ip -n %s addr add 10.77.0.2/24 dev eth0 && ip -n %s link set eth0 up" % (host, host))
        sh("ip -n %s route add default via 10.77.0.1 dev eth0" % host)
        sh("ip -n %s addr add fd77::1/64 dev up0 nodad" % up)
        if dual:
            sh("ip -n %s addr add fd77::2/64 dev eth0 nodad" % host)
            sh("ip -n %s -6 route add default via fd77::1 dev eth0" % host)
        open(work + "/dns.py", "w").write(script("DNSServer.swift"))
        open(work + "/checkserver.py", "w").write(script("ProbeServer.swift"))
        open(work + "/mode", "w").write("answer")
        open(work + "/http-mode", "w").write("204")
        processes.append(subprocess.Popen(["ip", "netns", "exec", up, "python3", work + "/dns.py", work + "/mode", work + "/dns-ready",
                                           "10.77.0.1", "check.test,A,10.77.0.1", "check.test,AAAA,fd77::1"]))
        env = dict(os.environ, PROBE_DUAL_STACK="1")
        processes.append(subprocess.Popen(["ip", "netns", "exec", up, "python3", work + "/checkserver.py", "8080", work + "/http-mode",
                                           work + "/http-ready"], env=env))
        os.makedirs("/etc/netns/" + host, exist_ok=True)
        open("/etc/netns/%s/resolv.conf" % host, "w").write("nameserver 10.77.0.1\noptions timeout:1 attempts:1\n")
        open(work + "/reachd.conf", "w").write("[Connectivity]\nURL=http://check.test:8080/generate_204\nInterval=3600\nTimeout=3\n"
                                                "[Cellular]\nModemManager=no\n[Limits]\nProbeMinInterval=100ms\n")
        # STATE_DIRECTORY: its event numbers in the work directory, not /var/lib/reachd.
        daemon = subprocess.Popen(["ip", "netns", "exec", host, args.reachd, "--socket", work + "/s", "--config", work + "/reachd.conf"],
                                  stderr=subprocess.DEVNULL, env=dict(os.environ, STATE_DIRECTORY=work))
        processes.append(daemon)
        for _ in range(100):
            if os.path.exists(work + "/s") and os.path.exists(work + "/http-ready") and os.path.exists(work + "/dns-ready"):
                break
            time.sleep(0.1)
        probe = [args.reachctl, "--socket", work + "/s", "probe"]
        subprocess.run(probe, capture_output=True)  # the first check, and the daemon's start, not counted
        time.sleep(0.5)
        bytes0, ticks0 = uplink_bytes(up), cpu_ticks(daemon.pid)
        verdicts = set()
        for _ in range(args.n):
            time.sleep(0.3)
            verdicts.add(subprocess.run(probe, capture_output=True, text=True).stdout.split(" · ")[0])
        bytes1, ticks1 = uplink_bytes(up), cpu_ticks(daemon.pid)
        requests = len(open(work + "/http-mode.log").read().splitlines())
        hz = os.sysconf("SC_CLK_TCK")
        return {"families": 2 if dual else 1, "verdicts": sorted(verdicts), "requests": requests,
                "bytes": (bytes1 - bytes0) / args.n, "cpu_ms": (ticks1 - ticks0) * 1000.0 / hz / args.n}
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGKILL); process.wait()
        for ns in (host, up):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        shutil.rmtree("/etc/netns/" + host, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reachd", required=True)
    parser.add_argument("--reachctl", required=True)
    parser.add_argument("-n", type=int, default=40)
    args = parser.parse_args()
    for dual in (False, True):
        r = run(args, dual)
        print("%d famil%s: %.0f bytes/check, %.2f ms CPU/check, %d HTTP requests for %d checks (+1), verdicts %s"
              % (r["families"], "y" if r["families"] == 1 else "ies", r["bytes"], r["cpu_ms"], r["requests"], args.n,
                 ", ".join(r["verdicts"])))


if __name__ == "__main__":
    sys.exit(main())
