#!/usr/bin/env python3
"""A client of reachd's metrics responder, well-behaved or not, for the integration tests.

Run inside the daemon's network namespace (`ip netns exec NS python3 metrics_client.py ...`).
Every scenario prints one JSON object on stdout.

  get HOST PORT [PATH [METHOD]]   one request; {"status", "headers", "body"}
  raw HOST PORT HEX               sends the bytes, reads the answer; {"status", "body"}
  huge HOST PORT SIZE             a request whose headers are SIZE bytes; {"status", "seconds"}
  slowloris HOST PORT             a request head dribbled a line every 0.3 s (stderr: "connected"
                                  once the first is sent); {"status", "seconds"}
  hold HOST PORT N SECONDS        N idle connections held open, then one more request while they
                                  are held (stderr: "held"), and after SECONDS one once they closed
                                  (asked again while the server still counts them); {"during", "after"}
  crowd HOST PORT N SOURCE...     N idle connections from the SOURCE addresses in turn (never a
                                  request), then one request from the default address while they
                                  are held; {"status", "open"} (open: idle ones the server kept)
"""
import json
import socket
import sys
import time


def connect(host, port, timeout=20):
    s = socket.create_connection((host, port), timeout=timeout)
    return s


def read_all(s):
    chunks = []
    while True:
        try:
            data = s.recv(65536)
        except ConnectionResetError:
            break
        except socket.timeout:
            chunks.append(b"<timeout>")
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def parse(answer):
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = None
    if lines and lines[0].startswith("HTTP/"):
        parts = lines[0].split(" ")
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return {"status": status, "headers": headers, "body": body.decode("utf-8", "replace")}


def exchange(host, port, data):
    s = connect(host, port)
    try:
        s.sendall(data)
        return parse(read_all(s))
    finally:
        s.close()


def main(argv):
    command, host, port = argv[1], argv[2], int(argv[3])
    if command == "get":
        path = argv[4] if len(argv) > 4 else "/metrics"
        method = argv[5] if len(argv) > 5 else "GET"
        request = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: metrics_client\r\n\r\n" % (method, path, host, port)
        result = exchange(host, port, request.encode())
    elif command == "raw":
        result = exchange(host, port, bytes.fromhex(argv[4]))
    elif command == "huge":
        size = int(argv[4])
        start = time.monotonic()
        s = connect(host, port)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            sent = 0
            try:
                while sent < size:
                    s.sendall(b"X-Filler: " + b"a" * 1000 + b"\r\n")
                    sent += 1012
                s.sendall(b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered and closed before everything was sent
            result = parse(read_all(s))
        finally:
            s.close()
        result = {"status": result["status"], "seconds": time.monotonic() - start}
    elif command == "slowloris":
        start = time.monotonic()
        s = connect(host, port)
        s.settimeout(0.3)
        answer = b""
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            print("connected", file=sys.stderr, flush=True)
            for i in range(200):
                try:
                    data = s.recv(65536)
                    if not data:
                        break
                    answer += data
                except socket.timeout:
                    pass
                try:
                    s.sendall(b"X-Slow-%d: x\r\n" % i)
                except (BrokenPipeError, ConnectionResetError):
                    break
        except ConnectionResetError:
            pass
        finally:
            s.close()
        result = {"status": parse(answer)["status"], "seconds": time.monotonic() - start}
    elif command == "hold":
        count, seconds = int(argv[4]), float(argv[5])
        held = []
        for _ in range(count):
            held.append(connect(host, port))
        # The server accepts in the order of the handshakes: this one comes after those held.
        request = ("GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
        during = exchange(host, port, request)
        print("held", file=sys.stderr, flush=True)
        time.sleep(seconds)
        for s in held:
            s.close()
        # Until the server has seen them close, their places are taken: ask until one is free.
        deadline = time.monotonic() + 10
        after = exchange(host, port, request)
        while after["status"] == 503 and time.monotonic() < deadline:
            after = exchange(host, port, request)
        result = {"during": during["status"], "after": after["status"]}
    elif command == "crowd":
        count, sources = int(argv[4]), argv[5:]
        held = []
        for i in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(20)
            s.bind((sources[i % len(sources)], 0))
            s.connect((host, port))
            held.append(s)
        request = ("GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
        answer = exchange(host, port, request)
        open_count = 0
        for s in held:
            try:
                s.setblocking(False)
                s.recv(1, socket.MSG_PEEK)   # an answer (503) or the end: not held any more
            except BlockingIOError:
                open_count += 1
            except OSError:
                pass
            s.close()
        result = {"status": answer["status"], "open": open_count}
    else:
        raise SystemExit("unknown command " + command)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
