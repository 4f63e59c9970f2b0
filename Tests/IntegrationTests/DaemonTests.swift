import Foundation
import ReachabilityClient
import ReachabilityCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// reachd and reachctl as built, end to end. The daemon runs in a namespace of its own.
@Suite struct DaemonLifecycleTests {
    @Test func reachctlWithoutDaemonExits69() throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        let path = directory + "/io.reachd.Reachability"
        for command in [["status"], ["monitor", "--json"], ["wait", "--timeout", "1"]] {
            let result = try run(Binaries.reachctl, command + ["--socket", path])
            #expect(result.status == 69, "\(command)")
            #expect(result.stderr == "reachctl: reachd is not running (no socket at \(path))\n", "\(command)")
        }
        // REACHD_SOCKET is honoured the same way.
        var environment = ProcessInfo.processInfo.environment
        environment["REACHD_SOCKET"] = path
        let result = try run(Binaries.reachctl, ["status"], environment: environment)
        #expect(result.status == 69 && result.stderr.contains(path))
    }

    @Test func usageErrorsExit2() throws {
        #expect(try run(Binaries.reachctl, ["status", "--bogus"]).status == 2)
        #expect(try run(Binaries.reachctl, []).status == 2)
        #expect(try run(Binaries.reachd, ["--bogus"]).status == 2)
        let help = try run(Binaries.reachctl, ["--help"])
        #expect(help.status == 0 && help.stdout.contains("Usage: reachctl"))
        #expect(try run(Binaries.reachd, ["--version"]).stdout.hasPrefix("reachd "))
    }

    @Test func servesRefusesASecondDaemonAndCleansUp() throws {
        guard isRoot else { print(rootSkipMessage); return }
        let ns = try TestNamespace(tag: "d")
        defer { ns.destroy() }
        let daemon = try DaemonUnderTest(namespace: ns)

        let status = try daemon.reachctl(["status", "--json"])
        #expect(status.status == 0)
        let decoded = try WireJSON.decoder().decode(Status.self, from: Data(status.stdout.utf8))
        #expect(decoded.status == .notReachable)
        #expect(try daemon.reachctl(["status"]).stdout == "offline")

        // A second daemon on the same socket refuses and leaves the first alone.
        let second = try run(ipCommand, ["netns", "exec", ns.name, Binaries.reachd, "--socket", daemon.socketPath])
        #expect(second.status == 1)
        #expect(second.stderr.contains("another reachd is already running on \(daemon.socketPath)"))
        #expect(try daemon.reachctl(["status"]).status == 0)

        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.child.stderr.contains("stopping"))
    }

    @Test func removesAStaleSocket() throws {
        guard isRoot else { print(rootSkipMessage); return }
        let ns = try TestNamespace(tag: "s")
        defer { ns.destroy() }
        let directory = try temporaryDirectory()
        // A socket file nobody listens on, as a crashed daemon leaves behind.
        try sh("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.bind('\(directory)/io.reachd.Reachability')\"")
        #expect(FileManager.default.fileExists(atPath: directory + "/io.reachd.Reachability"))
        let daemon = try DaemonUnderTest(namespace: ns, directory: directory)
        #expect(try daemon.reachctl(["status"]).status == 0)
    }

    @Test func unprivilegedDaemonFallsBackToXDGRuntimeDir() throws {
        guard isRoot else { print(rootSkipMessage); return }
        // Run as nobody, with /run/reachd unusable, and XDG_RUNTIME_DIR pointing at a private directory.
        let runtime = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(runtime)'", check: false) }
        try sh("chown nobody '\(runtime)'")
        let ns = try TestNamespace(tag: "u")
        defer { ns.destroy() }
        let child = try Child(ipCommand, ["netns", "exec", ns.name, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                          "env", "-u", "REACHD_SOCKET", "XDG_RUNTIME_DIR=\(runtime)", Binaries.reachd])
        let path = runtime + "/reachd/io.reachd.Reachability"
        let up = waitUntil(timeout: 10) { (try? run(Binaries.reachctl, ["status", "--socket", path]).status) == 0 || !child.isRunning }
        if FileManager.default.fileExists(atPath: "/run/reachd/io.reachd.Reachability") || access("/run/reachd", W_OK) == 0 && geteuid() != 0 {
            // The machine's own /run/reachd is writable by nobody: the fallback is not exercised.
        }
        #expect(up && child.isRunning, "\(child.stderr)")
        #expect(child.stderr.contains(path))
        child.signal(SIGTERM)
        #expect(child.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func pythonVarlinkClientTalksToReachd() throws {
        guard isRoot else { print(rootSkipMessage); return }
        guard FileManager.default.isExecutableFile(atPath: Binaries.python) else {
            Issue.record("no .venv/bin/python: run scripts/deps.sh (make test does)")
            return
        }
        let ns = try TestNamespace(tag: "p")
        defer { ns.destroy() }
        let daemon = try DaemonUnderTest(namespace: ns)
        let result = try run(Binaries.python, [Binaries.pythonClient, daemon.socketPath, "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = result.stdout.split(separator: "\n").compactMap {
            try? WireJSON.decoder().decode([String: JSONValue].self, from: Data($0.utf8))
        }
        #expect(objects.count == 4, "\(result.stdout)")
        guard objects.count == 4 else { return }
        let info = objects[0]["info"]?.objectValue
        #expect(info?["vendor"] == .string("reachd"))
        #expect(info?["interfaces"] == .array([.string("org.varlink.service"), .string("io.reachd.Reachability")]))
        #expect(objects[1]["status"]?.objectValue?["status"] == .string("notReachable"))
        #expect(objects[2]["error"] == .string("io.reachd.Reachability.ExpectedMore"))
        let event = objects[3]["event"]?.objectValue
        #expect(event?["event"] == .string("initial"))
        #expect(event?["reason"]?.objectValue?["code"] == .string("initial"))
    }
}
