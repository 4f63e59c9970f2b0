import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Reachability
import TestSupport

/// A python3 HTTP server in the uplink namespace: `/generate_204` answers 204 (the internet),
/// `/portal` redirects to a login page (a captive portal).
final class TestHTTPServer: @unchecked Sendable {
    static let script = #"""
import http.server, sys
port, ready = int(sys.argv[1]), sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        if self.path.startswith("/generate_204"):
            self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
        else:
            self.send_response(302); self.send_header("Location", "http://portal.test/login")
            self.send_header("Content-Length", "0"); self.end_headers()
server = http.server.ThreadingHTTPServer(("0.0.0.0", port), Handler)
open(ready, "w").close()
server.serve_forever()
"""#

    private let process: Child

    init(in namespace: TestNamespace, port: Int, directory: TemporaryDirectory) throws {
        let ready = directory.path + "/http.ready"
        guard let process = try startChild(ipCommand, ["netns", "exec", namespace.name, "python3", "-c", Self.script, "\(port)", ready],
                                           andWaitFor: ready, timeout: 10) else {
            throw SetupError("the test HTTP server did not start")
        }
        self.process = process
    }

    /// SIGKILL: python's own handlers may keep it from ending on SIGTERM.
    func stop() {
        process.killAndWait()
    }

    deinit { stop() }
}

extension SystemTests {
@Suite("NetworkDetector", .serialized)
struct NetworkDetectorTests {
    @Test("check() through reachd's Probe: the internet answers 204 → reachable", .needsRoot())
    func full() async throws {
        let network = try TestNetwork(subnet: 101)
        defer { network.destroy() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try TestHTTPServer(in: network.uplinkNamespace, port: 8080, directory: directory)
        defer { server.stop() }
        let url = "http://\(network.uplink.gatewayAddress):8080/generate_204"
        let daemon = try DaemonUnderTest(namespace: network.host, directory: directory.path,
                                      config: "[Connectivity]\nEnabled=yes\nURL=\(url)\nInterval=3600\n")
        defer { daemon.stop() }

        let detector = NetworkDetector(socketPath: daemon.socketPath)
        let result = await detector.check()
        #expect(result.isReachable)
        #expect(result.statusCode == 204)
        #expect(result.error == nil)
        #expect(result.connectivity == .full)
        #expect(result.probe?.url == url)

        let callback = Recorder<String>()
        detector.checkNetworkReachability { isReachable, statusCode, error in
            callback.append("\(isReachable) \(statusCode) \(error == nil)")
        }
        #expect(await eventually { callback.count == 1 })
        #expect(callback.all == ["true 204 true"])

        // connectivityChanges: the current connectivity first, then changes.
        var changes = detector.connectivityChanges.makeAsyncIterator()
        #expect(await changes.next() == .full)
        try network.uplink.dropCarrier()
        #expect(await changes.next() == Connectivity.none)
    }

    @Test("check() behind a captive portal: not reachable, HTTP 302, captivePortal error", .needsRoot())
    func portal() async throws {
        let network = try TestNetwork(subnet: 102)
        defer { network.destroy() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try TestHTTPServer(in: network.uplinkNamespace, port: 8080, directory: directory)
        defer { server.stop() }
        let url = "http://\(network.uplink.gatewayAddress):8080/portal"
        let daemon = try DaemonUnderTest(namespace: network.host, directory: directory.path,
                                      config: "[Connectivity]\nEnabled=yes\nURL=\(url)\nInterval=3600\n")
        defer { daemon.stop() }

        let result = await NetworkDetector(socketPath: daemon.socketPath).check()
        #expect(!result.isReachable)
        #expect(result.statusCode == 302)
        #expect(result.connectivity == .portal)
        #expect(result.error == .captivePortal(portalURL: "http://portal.test/login"))
    }

    @Test("check() with source .daemon and no daemon: daemonNotRunning, not a hang")
    func noDaemon() async {
        let path = "/tmp/reachd-api-no-daemon-\(getpid())/io.reachd.Reachability"
        let result = await NetworkDetector(source: .daemon, socketPath: path).check()
        #expect(!result.isReachable)
        #expect(result.statusCode == 0)
        #expect(result.error == .daemonNotRunning(socketPath: path))
    }
}
}
