#!/usr/bin/env python3
"""What the network can make reachd spend (BENCHMARKS.md, "A hostile link").

Two namespaces joined by a veth: reachd in `rf<pid>-h` (eth0, 10.78.0.2/24, IPv6 link-local,
accept_ra=1), the network in `rf<pid>-u` (up0, 10.78.0.1): an http check server on :8080 and an
https server on :8443 (a certificate of a CA made here with openssl, which `CAFile=` names) that
answers the captive-portal API (`captive: false`) and /generate_204. Raw router advertisements
come from up0 (a raw ICMPv6 socket, as tests' RouterAdvertiser sends them).

  - https: `URL=https://10.78.0.1:8443/generate_204`, `Probe()` asked --probes times (reachctl
    probe, ProbeMinInterval=100ms): reachd's CPU (utime+stime from /proc/PID/stat) per check the
    server saw;
  - flood R: two captive-portal URIs alternating, R advertisements a second for --seconds:
    reachd's CPU over that window as % of one core, the API requests and checks the servers saw,
    the events a subscriber got and reachd's log lines;
  - rotating routers R: `--routers` routers at a time, each from a link-local address of its own
    (a `proto ra` default route in reachd's namespace), a new one and the oldest one's withdrawal
    R times a second for --seconds: the same figures, and the most gateways a status listed.

  sudo bench/ra_flood.py --reachd .build/release/reachd [--reachctl …] [--rates 100,1000]
                        [--rotate-rates 200] [--routers 500]
Root only; removes its namespaces and processes whatever happens.
"""
import argparse, json, os, shutil, signal, subprocess, sys, tempfile, threading, time

ID = os.getpid()
HOST, NET = f"rf{ID}-h", f"rf{ID}-u"
TICK = os.sysconf("SC_CLK_TCK")

SERVER = r'''
import http.server, ssl, sys, threading
count = {"api": 0, "check": 0}
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path.startswith("/count"):
            body = ("%d %d\n" % (count["api"], count["check"])).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.send_header("Connection", "close")
            self.end_headers(); self.wfile.write(body); return
        with lock:
            count["api" if self.path.startswith("/capport") else "check"] += 1
        if self.path.startswith("/capport"):
            body = b'{"captive": false}'
            self.send_response(200); self.send_header("Content-Type", "application/captive+json")
            self.send_header("Content-Length", str(len(body))); self.send_header("Connection", "close")
            self.end_headers(); self.wfile.write(body)
        else:
            self.send_response(204); self.send_header("Connection", "close"); self.end_headers()
cert, key = sys.argv[1], sys.argv[2]
plain = http.server.ThreadingHTTPServer(("10.78.0.1", 8080), H)
tls = http.server.ThreadingHTTPServer(("10.78.0.1", 8443), H)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); context.load_cert_chain(cert, key)
tls.socket = context.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
print("ready", flush=True)
tls.serve_forever()
'''

FLOOD = r'''
import socket, struct, sys, time
ifname, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
uris = [u.encode() for u in sys.argv[4:]]
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
index = socket.if_nametoindex(ifname)
def option(uri):
    body = bytes([37, 0]) + uri
    body += bytes(-len(body) % 8)
    return bytes([37, len(body) // 8]) + body[2:]
ras = [struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + option(u) for u in uris]
start = time.monotonic(); i = 0
while time.monotonic() - start < seconds:
    s.sendto(ras[i % len(ras)], ("ff02::1", 0, 0, index)); i += 1
    delay = start + i / rate - time.monotonic()
    if delay > 0: time.sleep(delay)
print(i)
'''

ROTATE = r'''
import socket, struct, sys, time
ifname, routers, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, 78, 1)  # IPV6_FREEBIND
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
index = socket.if_nametoindex(ifname)
def advertise(router, lifetime):
    source = socket.inet_pton(socket.AF_INET6, "fe80::1:%x:%x" % (router >> 16, router & 0xffff))
    ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, lifetime, 0, 0)
    s.sendmsg([ra], [(socket.IPPROTO_IPV6, socket.IPV6_PKTINFO, source + struct.pack("@I", index))], 0, ("ff02::1", 0, 0, index))
start = time.monotonic(); i = 0
while time.monotonic() - start < seconds:
    i += 1
    advertise(i, 1800)
    if i > routers: advertise(i - routers, 0)
    delay = start + i / rate - time.monotonic()
    if delay > 0: time.sleep(delay)
print(i)
'''


def sh(cmd, check=True):
    return subprocess.run(cmd, shell=True, check=check, capture_output=True, text=True).stdout


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def counts():
    out = sh(f"ip netns exec {HOST} curl -s http://10.78.0.1:8080/count")
    api, check = out.split()
    return int(api), int(check)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reachd", required=True)
    parser.add_argument("--reachctl", default=None)
    parser.add_argument("--rates", default="100,1000")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--probes", type=int, default=60)
    parser.add_argument("--rotate-rates", default="200")
    parser.add_argument("--routers", type=int, default=500)
    args = parser.parse_args()
    reachctl = args.reachctl or os.path.join(os.path.dirname(args.reachd), "reachctl")
    work = tempfile.mkdtemp(prefix="ra_flood-")
    processes = []
    try:
        for ns in (HOST, NET):
            sh(f"ip netns add {ns}")
            sh(f"ip -n {ns} link set lo up")
        sh(f"ip -n {HOST} link add eth0 type veth peer name up0 netns {NET}")
        sh(f"ip netns exec {HOST} sysctl -qw net.ipv6.conf.eth0.accept_ra=1")
        sh(f"ip -n {HOST} addr add 10.78.0.2/24 dev eth0")
        # A global IPv6 address: the routers' default routes then give IPv6 a path.
        sh(f"ip -n {HOST} addr add fd78::2/64 dev eth0 nodad")
        sh(f"ip -n {NET} addr add 10.78.0.1/24 dev up0")
        sh(f"ip -n {HOST} link set eth0 up")
        sh(f"ip -n {NET} link set up0 up")
        sh(f"ip -n {HOST} route add default via 10.78.0.1")
        sh(f"cd {work} && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem "
           f"-days 1 -subj '/CN=bench CA' 2>&1 && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
           f"-keyout s.key -out s.csr -subj '/CN=10.78.0.1' 2>&1 && printf 'subjectAltName=IP:10.78.0.1\\n' > s.ext && "
           f"openssl x509 -req -in s.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile s.ext -out s.pem 2>&1")
        server = subprocess.Popen(["ip", "netns", "exec", NET, sys.executable, "-c", SERVER, f"{work}/s.pem", f"{work}/s.key"],
                                  stdout=subprocess.PIPE, text=True)
        processes.append(server)
        server.stdout.readline()
        # Link-local addresses through duplicate address detection: the kernel takes RAs only from them.
        for _ in range(100):
            if "tentative" not in sh(f"ip -n {NET} -6 addr show dev up0 scope link") and "fe80" in sh(f"ip -n {NET} -6 addr show dev up0"):
                break
            time.sleep(0.1)

        def daemon(url, label):
            config = f"{work}/{label}.conf"
            with open(config, "w") as f:
                f.write(f"[Connectivity]\nURL={url}\nInterval=300\nTimeout=2\nCAFile={work}/ca.pem\n"
                        f"[Cellular]\nModemManager=no\n[Limits]\nProbeMinInterval=100ms\n")
            log = open(f"{work}/{label}.log", "w")
            p = subprocess.Popen(["ip", "netns", "exec", HOST, args.reachd, "--config", config, "--socket", f"{work}/{label}.sock",
                                  "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, STATE_DIRECTORY=work))   # not /var/lib/reachd
            processes.append(p)
            for _ in range(300):
                if os.path.exists(f"{work}/{label}.sock"):
                    break
                time.sleep(0.05)
            if p.poll() is not None or not os.path.exists(f"{work}/{label}.sock"):
                raise RuntimeError(f"reachd did not start: {open(f'{work}/{label}.log').read()}")
            time.sleep(3)  # the first check and the link-local address settle
            return p, f"{work}/{label}.sock", f"{work}/{label}.log"

        def subscribed(label):
            """A daemon checking the http server, a `reachctl monitor --json` subscriber whose
            lines land in `events`, and the count of the daemon's log lines so far."""
            p, sock, log = daemon("http://10.78.0.1:8080/generate_204", label)
            monitor = subprocess.Popen([reachctl, "monitor", "--json", "--socket", sock], stdout=subprocess.PIPE, text=True)
            processes.append(monitor)
            events = []
            threading.Thread(target=lambda: events.extend(iter(monitor.stdout.readline, "")), daemon=True).start()
            time.sleep(0.5)
            return p, sock, log, monitor, events, sum(1 for _ in open(log))

        # 1. CPU per https check.
        p, sock, _ = daemon("https://10.78.0.1:8443/generate_204", "https")
        before_cpu, before = cpu(p.pid), counts()[1]
        for _ in range(args.probes):
            sh(f"{reachctl} probe --socket {sock}", check=False)
            time.sleep(0.2)  # past ProbeMinInterval=100ms: every Probe() is a check of its own
        used, checks = cpu(p.pid) - before_cpu, counts()[1] - before
        print(f"https: {checks} checks, {used:.2f} s CPU, {1000 * used / max(checks, 1):.1f} ms per check")
        p.send_signal(signal.SIGTERM); p.wait()

        # 2. Floods of alternating URIs.
        for rate in [float(r) for r in args.rates.split(",") if r]:
            label = f"flood{int(rate)}"
            p, sock, log, monitor, events, lines_before = subscribed(label)
            events_before, (api0, check0), cpu0, t0 = len(events), counts(), cpu(p.pid), time.monotonic()
            sent = sh(f"ip netns exec {NET} {sys.executable} -c '{FLOOD}' up0 {rate} {args.seconds} "
                      f"https://10.78.0.1:8443/capport/a https://10.78.0.1:8443/capport/b").strip()
            window = time.monotonic() - t0
            used = cpu(p.pid) - cpu0
            api1, check1 = counts()
            lines = sum(1 for _ in open(log)) - lines_before
            print(f"flood {rate:.0f} RA/s: {sent} RAs in {window:.1f} s; reachd CPU {100 * used / window:.1f} % of a core; "
                  f"{api1 - api0} API requests, {check1 - check0} checks, {len(events) - events_before} events, {lines} log lines")
            monitor.terminate(); monitor.wait()
            p.send_signal(signal.SIGTERM); p.wait()

        # 3. Routers that come and go.
        for rate in [float(r) for r in args.rotate_rates.split(",") if r]:
            label = f"rotate{int(rate)}"
            p, sock, log, monitor, events, lines_before = subscribed(label)
            events_before, (_, check0), cpu0, t0 = len(events), counts(), cpu(p.pid), time.monotonic()
            sent = sh(f"ip netns exec {NET} {sys.executable} -c '{ROTATE}' up0 {args.routers} {rate} {args.seconds}").strip()
            window = time.monotonic() - t0
            used = cpu(p.pid) - cpu0
            _, check1 = counts()
            lines = sum(1 for _ in open(log)) - lines_before
            flood = events[events_before:]
            most = max((len(json.loads(line)["current"]["gateways"]) for line in flood), default=0)
            size = max((len(line) for line in flood), default=0)
            print(f"rotating routers {rate:.0f}/s ({args.routers} at a time): {sent} routers in {window:.1f} s; "
                  f"reachd CPU {100 * used / window:.1f} % of a core; {check1 - check0} checks, {len(flood)} events "
                  f"(largest {size} bytes, at most {most} gateways listed), {lines} log lines")
            monitor.terminate(); monitor.wait()
            p.send_signal(signal.SIGTERM); p.wait()
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
        for ns in (HOST, NET):
            sh(f"ip netns del {ns}", check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
