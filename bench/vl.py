"""A minimal varlink client for the benchmarks: NUL-terminated JSON on a Unix stream socket."""
import json
import socket
import time

SUBSCRIBE = b'{"method":"io.reachd.Reachability.Subscribe","parameters":{},"more":true}\0'
GET_STATUS = b'{"method":"io.reachd.Reachability.GetStatus","parameters":{}}\0'


class Connection:
    def __init__(self, path, timeout=5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def fileno(self):
        return self.sock.fileno()

    def send(self, raw):
        self.sock.sendall(raw)

    def feed(self):
        """Reads what is there (one recv) and returns the complete messages, decoded."""
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("reachd closed the connection")
        self.buf += data
        return self._split()

    def _split(self):
        out = []
        while b"\0" in self.buf:
            raw, self.buf = self.buf.split(b"\0", 1)
            out.append(json.loads(raw))
        return out

    def read_one(self):
        while True:
            msgs = self._split_one()
            if msgs is not None:
                return msgs
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("reachd closed the connection")
            self.buf += data

    def _split_one(self):
        if b"\0" not in self.buf:
            return None
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self):
        self.sock.close()


def call(path, raw=GET_STATUS, timeout=5.0):
    c = Connection(path, timeout)
    try:
        c.send(raw)
        reply = c.read_one()
    finally:
        c.close()
    if "error" in reply:
        raise RuntimeError(f"varlink error {reply['error']}: {reply.get('parameters')}")
    return reply["parameters"]


def get_status(path):
    return call(path)["status"]


def wait_for_socket(path, timeout=20.0, proc=None):
    """Polls until GetStatus answers; returns the CLOCK_MONOTONIC stamp of the first answer."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"reachd exited with {proc.returncode} before answering")
        try:
            get_status(path)
            return time.clock_gettime(time.CLOCK_MONOTONIC)
        except (OSError, RuntimeError, ValueError) as e:
            last = e
            time.sleep(0.002)
    raise TimeoutError(f"no GetStatus answer on {path} after {timeout}s: {last}")


def subscribe(path, timeout=5.0):
    """Connects, subscribes and returns (connection, initial event)."""
    c = Connection(path, timeout)
    c.send(SUBSCRIBE)
    first = c.read_one()
    if "error" in first:
        raise RuntimeError(f"Subscribe: {first['error']}")
    return c, first["parameters"]["event"]


def strip_times(status):
    """A status with `since` and probe timestamps removed, for comparing two daemons' views."""
    s = dict(status)
    s.pop("since", None)
    if isinstance(s.get("probe"), dict):
        p = dict(s["probe"])
        p.pop("checkedAt", None)
        p.pop("rttMs", None)
        s["probe"] = p
    return s
