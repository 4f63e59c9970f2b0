import Foundation
import ReachabilityClient
import ReachabilityCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension ServiceSystemTests {
/// reachd and reachctl as built, end to end. The daemon runs in a namespace of its own.
@Suite struct DaemonLifecycleTests {
    @Test func reachctlWithoutDaemonExits69() throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        let path = directory + "/io.reachd.Reachability"
        for command in [["status"], ["monitor", "--json"], ["wait", "--timeout", "1"]] {
            let result = try run(Binaries.reachctl, command + ["--socket", path])
            #expect(result.status == 69, "\(command)")
            #expect(result.stderr == "reachctl: reachd is not running (no socket at \(path))\n"
                    + "reachctl: start it with 'systemctl start reachd.socket', or with 'make run' in its source tree\n", "\(command)")
        }
        // A socket file nobody listens on (left by a daemon that was killed) is told apart.
        close(try Self.listening(at: path, listen: false))
        defer { unlink(path) }
        let stale = try run(Binaries.reachctl, ["status", "--socket", path])
        #expect(stale.status == 69)
        #expect(stale.stderr.hasPrefix("reachctl: reachd is not running (\(path) is a stale socket: it exists, nobody listens on it)\n"),
                "\(stale.stderr)")
        // REACHD_SOCKET is honoured the same way.
        var environment = ProcessInfo.processInfo.environment
        environment["REACHD_SOCKET"] = path
        let result = try run(Binaries.reachctl, ["status"], environment: environment)
        #expect(result.status == 69 && result.stderr.contains(path))
    }

    /// A socket whose owner hangs up without a word is a daemon that does not answer: 69 too.
    @Test func reachctlExits69WhenTheDaemonHangsUp() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/io.reachd.Reachability"
        let fd = try Self.listening(at: path)
        defer { close(fd); unlink(path); rmdir(directory) }
        // Accepts and closes until the listening socket is shut down.
        let acceptor = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                close(client)
            }
        }
        acceptor.start()
        defer { shutdown(fd, Int32(SHUT_RDWR)) }
        for command in [["status"], ["probe"], ["check", "127.0.0.1"]] {
            let result = try run(Binaries.reachctl, command + ["--socket", path])
            #expect(result.status == 69, "\(command): \(result.stderr)")
            #expect(result.stderr == "reachctl: reachd closed the connection\n", "\(command)")
        }
    }

    /// A socket that takes connections and never answers (a stuck daemon: the kernel queues the
    /// connection, nobody reads): `wait` that has heard nothing by its time-out says reachd did
    /// not answer and exits 69, not 1 ("not online"), as every other command does.
    @Test func waitExits69WhenTheDaemonNeverAnswers() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/io.reachd.Reachability"
        let fd = try Self.listening(at: path)
        defer { close(fd); unlink(path); rmdir(directory) }
        for command in [["wait", "--timeout", "1"], ["wait", "--internet", "--timeout", "1", "-q"],
                        ["wait", "--stable", "5", "--timeout", "1"]] {
            let result = try run(Binaries.reachctl, command + ["--socket", path], timeout: 20)
            #expect(result.status == 69, "\(command): \(result.stderr)")
            #expect(result.stderr.hasPrefix("reachctl: reachd did not answer within 1 s (it accepted the connection at \(path))"),
                    "\(command): \(result.stderr)")
        }
    }

    /// A Unix stream socket bound at `path` and, with `listen`, listening, where no daemon answers.
    static func listening(at path: String, listen: Bool = true) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, !listen || Glibc.listen(fd, 8) == 0 else { close(fd); throw SetupError("bind/listen \(path): errno \(errno)") }
        return fd
    }

    @Test func usageErrorsExit2() throws {
        #expect(try run(Binaries.reachctl, ["status", "--bogus"]).status == 2)
        #expect(try run(Binaries.reachctl, []).status == 2)
        #expect(try run(Binaries.reachd, ["--bogus"]).status == 2)
        let help = try run(Binaries.reachctl, ["--help"])
        #expect(help.status == 0 && help.stdout.contains("Usage: reachctl"))
        #expect(try run(Binaries.reachd, ["--version"]).stdout.hasPrefix("reachd "))
    }

    @Test(.needsRoot()) func servesRefusesASecondDaemonAndCleansUp() throws {
        let ns = try TestNamespace(tag: "d")
        defer { ns.destroy() }
        let daemon = try DaemonUnderTest(namespace: ns)

        let status = try daemon.reachctl(["status", "--json"])
        #expect(status.status == 0)
        let decoded = try WireJSON.decoder().decode(Status.self, from: Data(status.stdout.utf8))
        #expect(decoded.status == .notReachable)
        #expect(try daemon.reachctl(["status"]).stdout == "offline")

        // A second daemon on the same socket refuses and leaves the first alone.
        let second = try run(ipCommand, ["netns", "exec", ns.name, "/usr/bin/env", "STATE_DIRECTORY=\(daemon.directory)",
                                         Binaries.reachd, "--socket", daemon.socketPath,
                                         "--config", daemon.configPath])
        #expect(second.status == 1)
        #expect(second.stderr.contains("another reachd is already running on \(daemon.socketPath)"))
        #expect(try daemon.reachctl(["status"]).status == 0)

        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.child.stderr.contains("stopping"))
    }

    /// At debug level reachd says how long each event took from the netlink read to the
    /// classified event and to the return of what it set off (the fan-out among it).
    @Test(.needsRoot()) func debugLogTimesEachNetlinkEvent() throws {
        let host = try TestNamespace(tag: "t"), network = try TestNamespace(tag: "u")
        defer { host.destroy(); network.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        defer { _ = daemon.stop() }
        let uplink = try VethUplink(host: host, uplink: network)
        defer { withExtendedLifetime(uplink) {} }
        let pattern = /#(\d+) timing: netlink read to event (\d+) µs, to the observers' return (\d+) µs/
        func timings() -> [(sequence: Int, event: Int, sent: Int)] {
            daemon.child.stderr.split(separator: "\n").compactMap { line in
                guard let match = line.firstMatch(of: pattern), let sequence = Int(match.1), let event = Int(match.2),
                      let sent = Int(match.3) else { return nil }
                return (sequence, event, sent)
            }
        }
        #expect(waitUntil(timeout: 15) { daemon.child.stderr.contains(": ethernet") && !timings().isEmpty }, "\(daemon.child.stderr)")
        let seen = timings()
        #expect(seen.allSatisfy { $0.event <= $0.sent }, "\(seen)")
        // The line follows the event's own line, with its number.
        let lines = daemon.child.stderr.split(separator: "\n")
        for timing in seen {
            let index = try #require(lines.firstIndex { $0.contains("#\(timing.sequence) timing:") })
            #expect(lines[..<index].contains { $0.contains("#\(timing.sequence) ") && !$0.contains("timing:") }, "\(lines)")
        }
    }

    /// `reachctl monitor` says on stderr when reachd goes away and when it is back (stdout keeps
    /// the events alone), and resumes after the last event it printed.
    @Test(.needsRoot()) func monitorSaysWhenReachdGoesAwayAndComesBack() throws {
        let namespace = try TestNamespace(tag: "mon")
        defer { namespace.destroy() }
        let daemon = try DaemonUnderTest(namespace: namespace)
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 })
        let last = try WireJSON.decoder().decode(ReachabilityEvent.self, from: Data(try #require(monitor.lines.last).utf8))
        daemon.stop()
        #expect(waitUntil(timeout: 10) { monitor.stderr.contains("reachctl: reachd went away (") }, "\(monitor.stderr)")
        #expect(monitor.stderr.contains("waiting for it to come back\n"))
        #expect(!monitor.stderr.contains("is back"))
        try daemon.start()
        #expect(waitUntil(timeout: 10) { monitor.stderr.contains("reachctl: reachd is back; resuming after #\(last.sequence)\n") },
                "\(monitor.stderr)")
        #expect(monitor.isRunning)
        // Said once each, and nothing of it on stdout.
        #expect(monitor.stderr.components(separatedBy: "went away").count == 2, "\(monitor.stderr)")
        #expect(monitor.lines.allSatisfy { $0.hasPrefix("{") })
    }

    @Test(.needsRoot()) func removesAStaleSocket() throws {
        let ns = try TestNamespace(tag: "s")
        defer { ns.destroy() }
        let directory = try temporaryDirectory()
        // A socket file nobody listens on, as a crashed daemon leaves behind.
        try sh("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.bind('\(directory)/io.reachd.Reachability')\"")
        #expect(FileManager.default.fileExists(atPath: directory + "/io.reachd.Reachability"))
        let daemon = try DaemonUnderTest(namespace: ns, directory: directory)
        #expect(try daemon.reachctl(["status"]).status == 0)
    }

    @Test(.needsRoot()) func unprivilegedDaemonFallsBackToXDGRuntimeDir() throws {
        // Run as nobody, with /run/reachd unusable, and XDG_RUNTIME_DIR pointing at a private directory.
        let runtime = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(runtime)'", check: false) }
        let config = try DaemonUnderTest.writeConfig(in: runtime)
        try sh("chown -R nobody '\(runtime)'")
        let ns = try TestNamespace(tag: "u")
        defer { ns.destroy() }
        let child = try Child(ipCommand, ["netns", "exec", ns.name, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                          "env", "-u", "REACHD_SOCKET", "XDG_RUNTIME_DIR=\(runtime)", Binaries.reachd, "--config", config])
        let path = runtime + "/reachd/io.reachd.Reachability"
        let up = waitUntil(timeout: 10) { (try? run(Binaries.reachctl, ["status", "--socket", path]).status) == 0 || !child.isRunning }
        #expect(up && child.isRunning, "\(child.stderr)")
        // The daemon says why it fell back: /run/reachd is not nobody's (if it were, this test would
        // not exercise the fallback, and says so by failing here).
        #expect(child.stderr.contains("cannot use /run/reachd ("), "\(child.stderr)")
        #expect(child.stderr.contains("; using \(path)"), "\(child.stderr)")
        #expect(child.stderr.contains(path))
        child.signal(SIGTERM)
        #expect(child.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(.needsRoot()) func journalPrefixesWhenStderrIsTheJournal() throws {
        let ns = try TestNamespace(tag: "j")
        defer { ns.destroy() }
        let daemon = try DaemonUnderTest(namespace: ns, launch: .init(logLevel: nil, variables: ["JOURNAL_STREAM=8:1234"]))
        let path = daemon.socketPath, child = daemon.child
        #expect(daemon.stop() == 0)
        let lines = child.stderr.split(separator: "\n")
        #expect(lines.contains("<6>listening on \(path)"), "\(child.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(child.stderr)")
        // Plain otherwise.
        #expect(try run(Binaries.reachd, ["--socket", path, "--bogus"]).stderr.hasPrefix("reachd: "))
    }

    @Test(.needsRoot(), .requires(.socketActivate)) func socketActivation() throws {
        try Requirement.socketActivate.check()
        let ns = try TestNamespace(tag: "a")
        defer { ns.destroy() }
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        let path = directory + "/io.reachd.Reachability"
        // systemd-socket-activate listens, then starts reachd with LISTEN_FDS=1 on the first
        // connection. It closes every other descriptor, which Foundation's Process mistakes for
        // an exit, so it runs detached with a log file instead of as a Child.
        let log = directory + "/log", config = try DaemonUnderTest.writeConfig(in: directory)
        let pid = try sh("\(ipCommand) netns exec \(ns.name) /usr/bin/systemd-socket-activate -l \(path) /usr/bin/env STATE_DIRECTORY=\(directory) \(Binaries.reachd) --config \(config) >\(log) 2>&1 & echo $!")
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? sh("kill -9 \(pid)", check: false) }
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: path) })
        let status = try run(Binaries.reachctl, ["status", "--socket", path])
        #expect(status.status == 0, "\(status.stderr)")
        let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(logText().contains("listening on the socket passed by systemd"), "\(logText())")
        _ = try sh("kill -TERM \(pid)")
        #expect(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: "/proc/\(pid)") || logText().contains("SIGTERM: stopping") })
        #expect(logText().contains("SIGTERM: stopping"))
    }

    @Test(.needsRoot(), .requires(.pythonVarlink)) func pythonVarlinkClientTalksToReachd() throws {
        try Requirement.pythonVarlink.check()
        let host = try TestNamespace(tag: "p"), uplink = try TestNamespace(tag: "pu")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        // GetInfo, GetStatus, Subscribe without more, then Subscribe with more for 3 events.
        let python = try Child(Binaries.python, [Binaries.pythonClient, daemon.socketPath, "3"])
        func objects() -> [[String: JSONValue]] {
            python.lines.compactMap { (try? JSONValue(parsing: Data($0.utf8)))?.objectValue }
        }
        #expect(waitUntil(timeout: 15) { objects().contains { $0["event"] != nil } }, "\(python.stderr)")
        _ = try VethUplink(host: host, uplink: uplink)
        #expect(python.wait(timeout: 15) == 0, "\(python.stderr)")

        let all = objects()
        #expect(all.count == 6, "\(python.lines)")
        guard all.count == 6 else { return }
        let info = all[0]["info"]?.objectValue
        #expect(info?["vendor"] == .string("reachd"))
        #expect(info?["interfaces"] == .array([.string("org.varlink.service"), .string("io.reachd.Reachability")]))
        #expect(all[1]["status"]?.objectValue?["status"] == .string("notReachable"))
        #expect(all[2]["error"] == .string("io.reachd.Reachability.ExpectedMore"))
        let events = all[3...].compactMap { $0["event"]?.objectValue }
        #expect(events.first?["event"] == .string("initial"))
        #expect(events.first?["reason"]?.objectValue?["code"] == .string("initial"))
        for event in events.dropFirst() {
            #expect(event["event"] == .string("reachabilityChanged"))
            #expect(event["previous"]?.objectValue != nil)
            #expect(event["reason"]?.objectValue?["interface"] == .string("eth0"))
        }
        let sequences = events.compactMap { $0["sequence"]?.intValue }
        #expect(sequences == sequences.sorted() && Set(sequences).count == 3)
    }

    /// The python client subscribes with `changes: [status]`: the link coming up with an
    /// address (no route: still not reachable) is filtered out; the default route, which makes
    /// the status `ethernet`, is sent, and every event carries `changes`.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func pythonVarlinkClientSubscribesToChanges() throws {
        guard FileManager.default.isExecutableFile(atPath: Binaries.python) else {
            Issue.record("no .venv/bin/python: run scripts/deps.sh (make test does)")
            return
        }
        let host = try TestNamespace(tag: "p"), uplink = try TestNamespace(tag: "pu")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let python = try Child(Binaries.python, [Binaries.pythonClient, daemon.socketPath, "2", "--changes", "status"])
        func events() -> [[String: JSONValue]] {
            python.lines.compactMap { (try? JSONValue(parsing: Data($0.utf8)))?.objectValue }
                .compactMap { $0["event"]?.objectValue }
        }
        #expect(waitUntil(timeout: 15) { !events().isEmpty }, "\(python.stderr)")
        let eth0 = try VethUplink(host: host, uplink: uplink, defaultRoute: false)
        // The link change reached the daemon (an unfiltered subscriber would have it) before the route.
        #expect(waitUntil(timeout: 10) {
            (try? daemon.reachctl(["status", "--json"]).stdout.contains("\"addresses\":[\"10.77.0.2/24\"")) == true
        })
        try host.ip("route add default via \(eth0.gatewayAddress) dev eth0")
        #expect(python.wait(timeout: 15) == 0, "\(python.stderr)")
        let received = events()
        #expect(received.count == 2)
        #expect(received.first?["changes"] == .array([]))
        let changes = received.last?["changes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(changes.contains("status") && changes.contains("reachable"))
        #expect(received.last?["reason"]?.objectValue?["code"] == .string("routeAdded"))
        #expect(received.last?["current"]?.objectValue?["status"] == .string("ethernet"))
    }
}
}
