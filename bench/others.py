#!/usr/bin/env python3
"""For comparison: the delay from a carrier change to systemd-networkd's and NetworkManager's
D-Bus PropertiesChanged signal, measured like reachd's (same topology, same raw RTM_NEWLINK
trigger stamped right before send; the signals and `ip -ts monitor link` each read and stamped by a
bench/stamp.c of its own while the harness sleeps through the change).

Each daemon runs in its own network namespace with a private mount namespace (`ip netns exec`
gives one): /sys read-only (so both run in their "container" mode, without udev), a tmpfs on /run,
and a private dbus-daemon as their system bus, found through DBUS_SYSTEM_BUS_ADDRESS. rb0 is not
managed by either (no configuration for it): both still publish its carrier on D-Bus —
networkd as Link.CarrierState, NetworkManager as Device.Wired.Carrier. Signals are read with
`dbus-monitor` through a pipe, as `ip monitor` is. Prints a JSON list on stdout.
"""
import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nl  # noqa: E402
import reachbench as rb  # noqa: E402
from nl import now, sh  # noqa: E402

OUT = os.path.join(rb.OUT, "others")
STAMP_BIN = os.path.join(rb.OUT, "stamp")
BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"""
NM_CONF = """[main]
plugins=keyfile
no-auto-default=*
dns=none
rc-manager=unmanaged
systemd-resolved=false
auth-polkit=false
[keyfile]
path=/run/NetworkManager/system-connections
[logging]
level=WARN
"""
NETWORKD = "/lib/systemd/systemd-networkd"
NM = "/usr/sbin/NetworkManager"
HEADER = re.compile(r"^(signal|method call|method return|error) .*?path=([^;\s]+)", re.M)


def log(msg):
    print(f"[others {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ensure_installed():
    """network-manager and systemd-networkd from apt, idempotently; NetworkManager's units are
    disabled right after installing, so that nothing on this machine starts it at boot."""
    missing = []
    if not os.access(NETWORKD, os.X_OK):
        missing.append("systemd")
    if not os.access(NM, os.X_OK):
        missing.append("network-manager")
    if not missing:
        return None
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if "network-manager" in missing:
        subprocess.run(["systemctl", "disable", "NetworkManager.service", "NetworkManager-wait-online.service",
                        "NetworkManager-dispatcher.service"], capture_output=True)
    if r.returncode != 0:
        return f"apt-get install {' '.join(missing)} failed: {r.stderr.strip()[-300:]}"
    return None


class DBusMonitor(rb.PipedProcess):
    def __init__(self, address):
        super().__init__(["dbus-monitor", "--address", address,
                          "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"],
                         stderr=subprocess.DEVNULL)


def version(binary):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[0] if out else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def measure(name, topo, bus_addr, start_script, matcher, changes, gap):
    log_path = os.path.join(OUT, f"{name}.log")
    logf = open(log_path, "w")
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_addr)
    daemon = rb.spawn(["ip", "netns", "exec", topo.a, "sh", "-c", start_script], env=env,
                      stdout=logf, stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        if daemon.poll() is not None:
            return {"name": name, "error": f"exited with {daemon.returncode} (see bench/out/others/{name}.log)"}
        mon = DBusMonitor(bus_addr)
        ipm = rb.IpMonitor(topo.a)
        # Each side read and stamped by a bench/stamp.c of its own, as in reachd's latency rows;
        # the harness sleeps through each change and reads the records afterwards.
        os.set_blocking(mon.fd, True)
        os.set_blocking(ipm.fd, True)
        d_src, i_src = rb.Stamper(STAMP_BIN, mon.fd), rb.Stamper(STAMP_BIN, ipm.fd)
        toggler = nl.LinkToggler(topo.b, rb.PEER)
        time.sleep(0.5)
        lat, ipl, missed = [], [], 0
        state = True
        warmup = 4
        settle = min(gap / 2, 0.005)
        for i in range(changes + warmup):
            d_src.chunks()
            for _, data in i_src.chunks():
                ipm.buf += data
            *_, ipm.buf = ipm.buf.split(b"\n")
            state = not state
            t0 = toggler.set_up(state)
            time.sleep(settle)
            chunks, t_d, t_i = [], None, None
            deadline = t0 + 3.0
            while (t_d is None or t_i is None) and now() < deadline:
                select.select([d_src, i_src], [], [], max(0.0, deadline - now()))
                new_d = [(t, data.decode(errors="replace")) for t, data in d_src.chunks()]
                chunks += new_d
                if new_d and t_d is None:
                    text, starts, off = "", [], 0
                    for s, c in chunks:
                        starts.append((off, s))
                        text += c
                        off += len(c)
                    heads = list(HEADER.finditer(text))
                    for k, h in enumerate(heads):
                        body = text[h.start():heads[k + 1].start() if k + 1 < len(heads) else len(text)]
                        if matcher(h.group(2), body, state):
                            t_d = max(s for o, s in starts if o <= h.start())
                            break
                for t, data in i_src.chunks():
                    ipm.buf += data
                    *full, ipm.buf = ipm.buf.split(b"\n")
                    for line in full:
                        fl = rb.IpMonitor.flags_of(line.decode(errors="replace"), rb.LINK)
                        if fl is not None and t_i is None and ("LOWER_UP" in fl) == state:
                            t_i = t
            if t_d is None or t_i is None:
                missed += 1
            elif i >= warmup:
                lat.append(t_d - t0)
                ipl.append(t_i - t0)
            rest = t0 + gap - now()
            if rest > 0:
                time.sleep(rest)
        toggler.close()
        d_src.stop()
        i_src.stop()
        mon.stop()
        ipm.stop()
        d, m = rb.summary_ms(lat), rb.summary_ms(ipl)
        if not lat:
            return {"name": name, "error": f"no D-Bus signal matched in {changes} changes (see bench/out/others/{name}.log)"}
        return {"name": name, "changes": len(lat), "missed": missed, "median_ms": d["median_ms"], "p99_ms": d["p99_ms"],
                "ip_median_ms": m["median_ms"], "ip_p99_ms": m["p99_ms"], "ratio_median": d["median_ms"] / m["median_ms"],
                "minus_ip_median_ms": sorted(a - b for a, b in zip(lat, ipl))[len(lat) // 2] * 1e3}
    finally:
        rb.stop(daemon)
        logf.close()


def networkd_match(path, body, state):
    if path != "/org/freedesktop/network1/link/_310":
        return False
    m = re.search(r'string "CarrierState"\s+variant\s+string "([^"]+)"', body)
    return bool(m) and (m.group(1) in ("carrier", "degraded-carrier", "enslaved")) == state


def nm_match(path, body, state):
    if not path.startswith("/org/freedesktop/NetworkManager/Devices/"):
        return False
    m = re.search(r'string "Carrier"\s+variant\s+boolean (true|false)', body)
    return bool(m) and (m.group(1) == "true") == state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--gap-ms", type=float, default=20.0)
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    results = []
    err = ensure_installed()
    if err:
        print(json.dumps([{"name": "NetworkManager / systemd-networkd", "error": err}]))
        return
    bus_sock = os.path.join(OUT, "bus.sock")
    if os.path.exists(bus_sock):
        os.unlink(bus_sock)
    with open(os.path.join(OUT, "bus.conf"), "w") as f:
        f.write(BUS_CONF.format(sock=bus_sock))
    with open(os.path.join(OUT, "nm.conf"), "w") as f:
        f.write(NM_CONF)
    os.makedirs(os.path.join(OUT, "nm.conf.d"), exist_ok=True)
    bus = rb.spawn(["dbus-daemon", "--config-file", os.path.join(OUT, "bus.conf"), "--nofork", "--nopidfile"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addr = f"unix:path={bus_sock}"
    topo = None
    try:
        for _ in range(100):
            if os.path.exists(bus_sock):
                break
            time.sleep(0.05)
        prefix = "mount -o remount,ro /sys && mount -t tmpfs tmpfs /run && "
        cases = [
            ("systemd-networkd", NETWORKD,
             prefix + "mkdir -p /run/systemd/netif/links /run/systemd/netif/leases /run/systemd/netif/lldp && "
             "chown -R systemd-network: /run/systemd/netif && exec " + NETWORKD, networkd_match),
            ("NetworkManager", NM,
             prefix + "mount -t tmpfs tmpfs /var/lib/NetworkManager && exec " + NM + " --no-daemon "
             f"--config={OUT}/nm.conf --config-dir={OUT}/nm.conf.d --state-file=/run/NetworkManager/NetworkManager.state "
             "--intern-config=/run/NetworkManager/intern.conf", nm_match),
        ]
        for name, binary, script, matcher in cases:
            topo = rb.Topology("o" + args.id)
            log(f"{name}: {args.changes} carrier changes")
            try:
                r = measure(name, topo, addr, script, matcher, args.changes, args.gap_ms / 1e3)
            except Exception as e:  # noqa: BLE001 - one failing daemon must not hide the other
                r = {"name": name, "error": f"{type(e).__name__}: {e}"}
            r["version"] = version(binary)
            results.append(r)
            topo.destroy()
            topo = None
    finally:
        if topo is not None:
            topo.destroy()
        rb.kill_children()
        if os.path.exists(bus_sock):
            os.unlink(bus_sock)
    print(json.dumps(results))


if __name__ == "__main__":
    if shutil.which("dbus-daemon") is None or shutil.which("dbus-monitor") is None:
        print(json.dumps([{"name": "NetworkManager / systemd-networkd", "error": "dbus-daemon/dbus-monitor missing"}]))
        sys.exit(0)
    main()
