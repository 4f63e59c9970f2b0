import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP server (python3 http.server) inside a test's namespace, playing the internet or
/// a captive portal. Its answer is the mode in a control file, read on every request, so a test
/// switches it (portal → logged in) while the daemon side keeps running. Every request line is
/// appended to a log (path, Host, User-Agent, Accept). With a certificate it speaks https.
public final class ProbeServer: @unchecked Sendable {
    public enum Mode: Sendable {
        case noContent                 // 204
        case emptyOK                   // 200, empty body
        case body(String)              // 200 with this body
        case redirect(String)          // 302 with this Location
        case login                     // 200, a chunked HTML login page
        case hang                      // read the request, never answer
        case slow(Double)              // 204 after this many seconds
        case raw([UInt8])              // these bytes as the whole answer, then close (a hostile server)
        case json(String)              // 200, application/captive+json with this body (a captive-portal API)
        case big(Int)                  // 200 with a body of this many bytes
        case trickle                   // 200, then a byte every half second, never ending

        public var text: String {
            switch self {
            case .noContent: return "204"
            case .emptyOK: return "empty200"
            case .body(let body): return "body:" + body
            case .redirect(let location): return "redirect:" + location
            case .login: return "login"
            case .hang: return "hang"
            case .slow(let seconds): return "slow:\(seconds)"
            case .raw(let bytes): return "raw:" + Data(bytes).base64EncodedString()
            case .json(let body): return "json:" + body
            case .big(let count): return "big:\(count)"
            case .trickle: return "trickle"
            }
        }
    }

    static let script = #"""
import base64, http.server, os, signal, socket, ssl, sys, time
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
port, control, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
certificate = sys.argv[4:6]

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        try:
            with open(control) as f:
                mode = f.read().strip()
        except OSError:
            mode = "204"
        with open(control + ".log", "a") as f:
            f.write("%s %s %s %s\n" % (self.path, self.headers.get("Host"), self.headers.get("User-Agent"), self.headers.get("Accept")))
        if mode == "204":
            self.send_response(204); self.end_headers()
        elif mode == "empty200":
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
        elif mode.startswith("body:"):
            body = mode[5:].encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        elif mode.startswith("redirect:"):
            self.send_response(302); self.send_header("Location", mode[9:]); self.send_header("Content-Length", "0"); self.end_headers()
        elif mode == "login":
            self.send_response(200); self.send_header("Content-Type", "text/html"); self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            for part in (b"<html><body><h1>Welcome</h1>", b"<form action=/login>Please log in</form></body></html>"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        elif mode == "hang":
            time.sleep(3600)
        elif mode.startswith("slow:"):
            time.sleep(float(mode[5:]))
            self.send_response(204); self.end_headers()
        elif mode.startswith("raw:"):
            self.wfile.write(base64.b64decode(mode[4:])); self.wfile.flush()
            self.close_connection = True
        elif mode.startswith("json:"):
            body = mode[5:].encode()
            self.send_response(200); self.send_header("Content-Type", "application/captive+json")
            self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        elif mode.startswith("big:"):
            count = int(mode[4:])
            self.send_response(200); self.send_header("Content-Type", "application/captive+json")
            self.send_header("Content-Length", str(count)); self.end_headers()
            try:
                chunk = b"[" * 65536
                while count > 0:
                    self.wfile.write(chunk[:count]); count -= len(chunk)
            except OSError:
                pass
            self.close_connection = True
        elif mode == "trickle":
            self.send_response(200); self.send_header("Content-Type", "application/captive+json"); self.end_headers()
            try:
                while True:
                    self.wfile.write(b" "); self.wfile.flush(); time.sleep(0.5)
            except OSError:
                pass
            self.close_connection = True

class DualStack(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

if os.environ.get("PROBE_DUAL_STACK") == "1":
    server = DualStack(("::", port), Handler)
else:
    server = http.server.ThreadingHTTPServer(("0.0.0.0", port), Handler)
server.daemon_threads = True
if certificate:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate[0], certificate[1])
    server.socket = context.wrap_socket(server.socket, server_side=True)
open(ready, "w").write("ready")
server.serve_forever()
"""#

    public let namespace: TestNamespace
    public let port: Int
    private let directory: URL
    private var process: Child?

    private var controlPath: String { directory.appendingPathComponent("mode").path }

    /// Starts the server on `port` in `namespace` and waits until it listens; with
    /// `certificate` (PEM certificate and key paths) it speaks https; with `dualStack` it
    /// listens on IPv6 as well as IPv4 (else on IPv4 alone, where an IPv6 connection is refused).
    public init(in namespace: TestNamespace, port: Int = 8080, mode: Mode = .noContent,
                certificate: (certificate: String, key: String)? = nil, dualStack: Bool = false) throws {
        self.namespace = namespace
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(namespace.name)-probe-\(port)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptPath = directory.appendingPathComponent("server.py").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let ready = directory.appendingPathComponent("ready").path
        try set(mode)
        let command = "exec ip netns exec \(namespace.name) env PROBE_DUAL_STACK=\(dualStack ? 1 : 0) python3 \(scriptPath) \(port) \(controlPath) \(ready)"
            + (certificate.map { " \($0.certificate) \($0.key)" } ?? "")
        process = try startChild("/bin/sh", ["-c", command], andWaitFor: ready, timeout: 15)
        guard process != nil else {
            stop()
            throw ProbeServerError(description: "python3 probe server in \(namespace.name) did not start")
        }
    }

    /// Switches the answer for the next requests (written atomically).
    public func set(_ mode: Mode) throws {
        try mode.text.write(toFile: controlPath, atomically: true, encoding: .utf8)
    }

    /// The requests seen so far: "path host user-agent" per line.
    public var requests: [String] {
        let text = (try? String(contentsOfFile: controlPath + ".log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    public func stop() {
        process?.killAndWait()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

public struct ProbeServerError: Error, CustomStringConvertible {
    public let description: String
}
