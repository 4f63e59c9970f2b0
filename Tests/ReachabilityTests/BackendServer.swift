import Foundation
import ReachabilitySystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// An app's own backend on loopback (python3 http.server on 127.0.0.1, a port the kernel
/// picks): `/ok` 200 with a body (and a Cache-Control inviting a cache), `/moved` 301 to
/// `/elsewhere` on itself, `/missing` 404, `/hang` reads the request and never answers.
/// Every request path is logged, so a test sees what was asked (and that a redirect was not
/// followed).
final class BackendServer: @unchecked Sendable {
    static let script = #"""
import http.server, signal, sys, time
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
ready, log = sys.argv[1], sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        with open(log, "a") as f:
            f.write(self.path + "\n")
        port = self.server.server_address[1]
        if self.path == "/ok":
            body = b"hello from the backend"
            self.send_response(200); self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=3600"); self.end_headers(); self.wfile.write(body)
        elif self.path == "/moved":
            self.send_response(301); self.send_header("Location", "http://127.0.0.1:%d/elsewhere" % port)
            self.send_header("Content-Length", "0"); self.end_headers()
        elif self.path == "/hang":
            time.sleep(3600)
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(ready + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os; os.rename(ready + ".tmp", ready)
server.serve_forever()
"""#

    let port: Int
    private let directory: TemporaryDirectory
    private let process: Child

    init() throws {
        directory = try TemporaryDirectory()
        let ready = directory.path + "/port", log = directory.path + "/requests"
        process = try Child("/usr/bin/python3", ["-c", Self.script, ready, log], output: .discard, error: .discard)
        guard waitUntil(timeout: 15, { FileManager.default.fileExists(atPath: ready) }),
              let text = try? String(contentsOfFile: ready, encoding: .utf8), let port = Int(text) else {
            process.killAndWait()
            throw SetupError("the loopback backend did not start")
        }
        self.port = port
    }

    func url(_ path: String) -> URL {
        // The path is one of ours: a well-formed URL.
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// The paths asked for so far, in order.
    var requests: [String] {
        let text = (try? String(contentsOfFile: directory.path + "/requests", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    func stop() {
        process.killAndWait()
    }

    deinit { stop() }
}

/// A loopback port that refuses connections: bound, never listening (held until released).
final class RefusingPort: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw Errno.current("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            let error = Errno.current(bound != 0 ? "bind" : "getsockname")
            Glibc.close(fd)
            throw error
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    deinit { Glibc.close(fd) }
}
