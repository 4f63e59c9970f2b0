"""A stand-in for reachd used to develop and self-check the harness (`bench/run.sh --fake`):
it speaks the same varlink subset (GetStatus, Subscribe) and emits one event per link change
seen on RTNLGRP_LINK. It is not a model of reachd's logic, only of its wire behaviour.
"""
import argparse
import json
import os
import selectors
import socket
import struct
import time

RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK = 16, 17, 18
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
IFLA_IFNAME = 3


def parse_links(data):
    off = 0
    while off + 16 <= len(data):
        length, mtype, _, _, _ = struct.unpack_from("=IHHII", data, off)
        if length < 16:
            break
        if mtype in (RTM_NEWLINK, RTM_DELLINK):
            _, _, index, flags, _ = struct.unpack_from("=BxHiII", data, off + 16)
            name, a = None, off + 32
            while a + 4 <= off + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype == IFLA_IFNAME:
                    name = data[a + 4:a + alen].split(b"\0")[0].decode()
                a += (alen + 3) & ~3
            yield mtype, index, flags, name
        off += (length + 3) & ~3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--config")
    args = ap.parse_args()

    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    nl.bind((0, 1))  # RTNLGRP_LINK
    nl.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    links, seq = {}, [int(time.time() * 1000)]
    dump = struct.pack("=IHHII", 32, RTM_GETLINK, 0x301, 1, 0) + bytes(16)
    nl.send(dump)
    done = False
    while not done:
        data = nl.recv(1 << 16)
        for mtype, index, flags, name in parse_links(data):
            links[index] = {"name": name, "index": index, "up": bool(flags & IFF_UP),
                            "carrier": bool(flags & IFF_LOWER_UP)}
        done = struct.unpack_from("=H", data, 4)[0] == 3 or b"" == data

    def status():
        ifs = sorted(links.values(), key=lambda l: l["index"])
        up = [l for l in ifs if l["up"] and l["carrier"] and l["name"] != "lo"]
        return {"status": "ethernet" if up else "notReachable", "reachable": bool(up),
                "interfaces": ifs, "since": "x"}

    if os.path.exists(args.socket):
        os.unlink(args.socket)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(args.socket)
    ls.listen(4096)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, "listen")
    sel.register(nl, selectors.EVENT_READ, "netlink")
    subs, bufs = set(), {}
    if os.environ.get("NOTIFY_SOCKET"):
        n = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        n.sendto(b"READY=1", os.environ["NOTIFY_SOCKET"])
        n.close()
    cur = status()
    while True:
        for key, _ in sel.select():
            if key.data == "listen":
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    continue
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "client")
            elif key.data == "netlink":
                try:
                    data = nl.recv(1 << 16)
                except OSError:      # ENOBUFS: overrun; the next message brings the state
                    continue
                for mtype, index, flags, name in parse_links(data):
                    if mtype == RTM_DELLINK:
                        links.pop(index, None)
                    else:
                        links[index] = {"name": name, "index": index, "up": bool(flags & IFF_UP),
                                        "carrier": bool(flags & IFF_LOWER_UP)}
                new = status()
                if new != cur:
                    seq[0] += 1
                    ev = {"sequence": seq[0], "event": "reachabilityChanged",
                          "reason": {"code": "linkUp", "interface": None, "detail": None},
                          "previous": cur, "current": new}
                    cur = new
                    raw = json.dumps({"parameters": {"event": ev}, "continues": True}).encode() + b"\0"
                    for c in list(subs):
                        try:
                            c.setblocking(True)
                            c.sendall(raw)
                        except OSError:
                            subs.discard(c)
            else:
                c = key.fileobj
                data = c.recv(65536)
                if not data:
                    sel.unregister(c)
                    subs.discard(c)
                    c.close()
                    continue
                bufs[c] += data
                while b"\0" in bufs[c]:
                    raw, bufs[c] = bufs[c].split(b"\0", 1)
                    m = json.loads(raw)
                    if m["method"].endswith("GetStatus"):
                        c.sendall(json.dumps({"parameters": {"status": cur}}).encode() + b"\0")
                    elif m["method"].endswith("Subscribe"):
                        ev = {"sequence": seq[0], "event": "initial",
                              "reason": {"code": "initial", "interface": None, "detail": None},
                              "previous": None, "current": cur}
                        c.sendall(json.dumps({"parameters": {"event": ev}, "continues": True}).encode() + b"\0")
                        subs.add(c)


if __name__ == "__main__":
    main()
