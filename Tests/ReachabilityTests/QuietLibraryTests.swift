import Foundation
import Testing
import TestSupport

extension SystemTests {
/// A library writes nothing to its app's stderr: the in-process fallback (the monitor, its
/// ModemManager source, its connectivity check) logs only into a sink the app gives it. Run as
/// a real app would be (Tests/InProcessApp, a child process), in a namespace where the monitor
/// has something to say: no system bus for ModemManager, and a forged netlink message from
/// another process (reachd logs a warning for each).
@Suite("The app library is quiet unless given a sink", .serialized)
struct QuietLibraryTests {
    static var app: String { Binaries.directory + "/InProcessApp" }

    /// Runs the app in a fresh namespace: once its first path is out, another process forges a
    /// link announcement, then a real link `mark0` comes up. The kernel's messages about it come
    /// after the forged one on the monitor's socket, so when the app has seen `mark0` the monitor
    /// has already dropped (and logged) the forgery.
    func runApp(sink: Bool) throws -> (status: Int32, stdout: [String], stderr: String) {
        let namespace = try TestNamespace(tag: "q")
        defer { namespace.destroy() }
        let child = try Child(ipCommand, ["netns", "exec", namespace.name, Self.app, "--until", "mark0"] + (sink ? ["--sink"] : []))
        guard waitUntil(timeout: 20, { child.lines.contains { $0.hasPrefix("path:") } }) else {
            child.wait(timeout: 0)
            throw SetupError("InProcessApp printed no path: \(child.lines) \(child.stderr)")
        }
        try namespace.exec("python3 \(Paths.file("Tests/python/forge_netlink.py")) spoof0")
        try namespace.ip("link add mark0 type veth peer name mark1")
        try namespace.ip("addr add 10.203.0.1/24 dev mark0")
        try namespace.ip("link set mark1 up")
        try namespace.ip("link set mark0 up")
        let status = child.wait(timeout: 20)
        return (status, child.lines, child.stderr)
    }

    @Test("without a sink nothing reaches stderr; with one, the sink gets what reachd would log", .needsRoot())
    func quietUnlessGivenASink() throws {
        let quiet = try runApp(sink: false)
        #expect(quiet.status == 0, "\(quiet.stdout) \(quiet.stderr)")
        #expect(quiet.stdout.last == "path: mark0", "\(quiet.stdout)")
        #expect(!quiet.stdout.contains { $0.hasPrefix("log:") }, "\(quiet.stdout)")
        #expect(quiet.stderr == "")

        // The same run with a sink: the lines were there to write, and went to the sink only.
        let logged = try runApp(sink: true)
        #expect(logged.status == 0, "\(logged.stdout) \(logged.stderr)")
        #expect(logged.stdout.contains { $0.hasPrefix("log: warning: dropped a netlink message sent by another process (port ") },
                "\(logged.stdout)")
        #expect(logged.stdout.contains { $0.hasPrefix("log: notice: ModemManager: no D-Bus system bus") }, "\(logged.stdout)")
        #expect(!logged.stdout.contains { $0.contains("spoof0") && $0.hasPrefix("path:") }, "\(logged.stdout)")
        #expect(logged.stderr == "")
    }
}
}
