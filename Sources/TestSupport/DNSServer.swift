import Foundation

/// A small DNS server (python3, UDP and TCP port 53) in a test's namespace, playing the
/// resolver the system asks: it answers A and AAAA for its names, and can be switched to never
/// answer or to answer SERVFAIL. `useAsResolver(for:)` makes it the resolver of everything
/// started with `ip netns exec` in another namespace (`/etc/netns/NAME/resolv.conf`).
public final class DNSServer: @unchecked Sendable {
    /// How the server answers the next questions.
    public enum Mode: String, Sendable {
        /// The records it holds; NXDOMAIN for other names.
        case answer
        /// Reads each question and sends nothing back.
        case silent
        /// SERVFAIL to every question.
        case servfail
    }

    static let script = #"""
import signal, socket, struct, sys, threading
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
control, ready, listen = sys.argv[1], sys.argv[2], sys.argv[3]
records = {}
for spec in sys.argv[4:]:
    name, kind, address = spec.split(",")
    records.setdefault((name.lower().rstrip("."), kind), []).append(address)

def answer(query):
    try:
        with open(control) as f:
            mode = f.read().strip()
    except OSError:
        mode = "answer"
    if mode == "silent" or len(query) < 12:
        return None
    ident, flags, qd = struct.unpack("!HHH", query[:6])
    at, labels = 12, []
    while at < len(query) and query[at] != 0:
        length = query[at]; labels.append(query[at + 1:at + 1 + length].decode("ascii", "replace")); at += 1 + length
    question = query[12:at + 5]
    qtype = struct.unpack("!H", query[at + 1:at + 3])[0] if at + 3 <= len(query) else 0
    name = ".".join(labels).lower()
    rd = flags & 0x0100
    if mode == "servfail":
        return struct.pack("!HHHHHH", ident, 0x8080 | rd | 2, 1, 0, 0, 0) + question
    kind = {1: "A", 28: "AAAA"}.get(qtype)
    known = any(key[0] == name for key in records)
    addresses = records.get((name, kind), []) if kind else []
    rcode = 0 if known else 3
    body = b""
    for address in addresses:
        if kind == "A":
            data = socket.inet_pton(socket.AF_INET, address)
        else:
            data = socket.inet_pton(socket.AF_INET6, address)
        body += struct.pack("!HHHIH", 0xC00C, qtype, 1, 30, len(data)) + data
    return struct.pack("!HHHHHH", ident, 0x8480 | rd | rcode, 1, len(addresses), 0, 0) + question + body

def serve_udp(sock):
    while True:
        query, peer = sock.recvfrom(4096)
        reply = answer(query)
        if reply is not None:
            sock.sendto(reply, peer)

def serve_tcp(sock):
    while True:
        conn, _ = sock.accept()
        try:
            length = struct.unpack("!H", conn.recv(2))[0]
            reply = answer(conn.recv(length))
            if reply is not None:
                conn.sendall(struct.pack("!H", len(reply)) + reply)
        except Exception:
            pass
        finally:
            conn.close()

family = socket.AF_INET6 if ":" in listen else socket.AF_INET
udp = socket.socket(family, socket.SOCK_DGRAM); udp.bind((listen, 53))
tcp = socket.socket(family, socket.SOCK_STREAM); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind((listen, 53)); tcp.listen(16)
threading.Thread(target=serve_tcp, args=(tcp,), daemon=True).start()
open(ready, "w").write("ready")
serve_udp(udp)
"""#

    public let namespace: TestNamespace
    /// The address it listens on.
    public let address: String
    private let directory: URL
    private var process: Child?
    private var resolverDirectories: [String] = []

    private var controlPath: String { directory.appendingPathComponent("mode").path }

    /// Starts the server on `address` in `namespace`, holding `records` (name, `A` or `AAAA`,
    /// address), and waits until it listens.
    public init(in namespace: TestNamespace, address: String, records: [(name: String, type: String, address: String)],
                mode: Mode = .answer) throws {
        self.namespace = namespace
        self.address = address
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(namespace.name)-dns")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptPath = directory.appendingPathComponent("dns.py").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let ready = directory.appendingPathComponent("ready").path
        try set(mode)
        let specs = records.map { "\($0.name),\($0.type),\($0.address)" }.joined(separator: " ")
        let command = "exec ip netns exec \(namespace.name) python3 \(scriptPath) \(controlPath) \(ready) \(address) \(specs)"
        process = try startChild("/bin/sh", ["-c", command], andWaitFor: ready, timeout: 15)
        guard process != nil else {
            stop()
            throw ProbeServerError(description: "python3 DNS server in \(namespace.name) did not start")
        }
    }

    /// Switches how the next questions are answered.
    public func set(_ mode: Mode) throws {
        try mode.rawValue.write(toFile: controlPath, atomically: true, encoding: .utf8)
    }

    /// Makes this server the only resolver of programs run with `ip netns exec` in `other`
    /// (which bind-mounts `/etc/netns/NAME/resolv.conf` over `/etc/resolv.conf`): one try of
    /// one second per question, so a silent server fails within a check's budget.
    public func useAsResolver(for other: TestNamespace) throws {
        let path = "/etc/netns/\(other.name)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try "nameserver \(address)\noptions timeout:1 attempts:1\n"
            .write(toFile: path + "/resolv.conf", atomically: true, encoding: .utf8)
        resolverDirectories.append(path)
    }

    public func stop() {
        process?.killAndWait()
        try? FileManager.default.removeItem(at: directory)
        for path in resolverDirectories { try? FileManager.default.removeItem(atPath: path) }
        resolverDirectories = []
    }

    deinit { stop() }
}
