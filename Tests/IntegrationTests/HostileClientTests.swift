import Foundation
import Testing
import ReachabilityCore
import ReachabilitySystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// What an unfriendly local user can try against reachd, and what must hold: out-of-range
/// numbers in the configuration are refused when read, and never trap later.
@Suite(.serialized) struct HostileConfigurationTests {
    /// `--check-config` names file, line and key and exits 1 for every out-of-range number.
    @Test(arguments: [
        ("[Monitor]\nDebounce=99999999999999999999\n", "reachd.conf:2: [Monitor] Debounce=99999999999999999999: time span out of range"),
        ("[Connectivity]\nInterval=99999999999999999999\n", "reachd.conf:2: [Connectivity] Interval=99999999999999999999: time span out of range"),
        ("[Connectivity]\nTimeout=1e400\n", "reachd.conf:2: [Connectivity] Timeout=1e400: bad time span"),
        ("[Events]\nHistory=99999999999999999999\n", "reachd.conf:2: [Events] History=99999999999999999999: bad number"),
        ("\n[Limits]\nMaxQueuedBytes=99999999999999999999G\n", "reachd.conf:3: [Limits] MaxQueuedBytes=99999999999999999999G: bad size"),
        ("[Limits]\nMaxChecksInFlight=0\n", "reachd.conf:2: [Limits] MaxChecksInFlight=0: bad number"),
    ])
    func checkConfigRefusesOutOfRangeNumbers(_ config: String, _ message: String) throws {
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        try config.write(toFile: directory + "/reachd.conf", atomically: true, encoding: .utf8)
        let result = try run(Binaries.reachd, ["--check-config", "--config", directory + "/reachd.conf"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(directory + "/" + message), "\(result.stderr)")
    }

    /// A running daemon given an out-of-range number by SIGHUP keeps its configuration and keeps
    /// answering; the one it started with (a short Interval) still works.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func reloadWithOutOfRangeNumberKeepsRunning() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig + "[Monitor]\nDebounce=10\n")
        try "[Connectivity]\nEnabled=no\nInterval=99999999999999999999\n[Cellular]\nModemManager=no\n[Monitor]\nDebounce=99999999999999999999\n"
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("keeping the running configuration") }, "\(daemon.child.stderr)")
        #expect(daemon.child.isRunning)
        #expect(try daemon.reachctl(["status"]).status == 0)
    }
}
}

/// reachd as an unprivileged user (`nobody`, as under reachd.service) in a network namespace,
/// optionally under a task limit (`prlimit --nproc`, as `TasksMax=`), on a socket every user
/// may reach.
extension DaemonUnderTest {
    /// - Parameter environment: added to the daemon's (e.g. DBUS_SYSTEM_BUS_ADDRESS of a private bus).
    static func unprivileged(namespace: TestNamespace, config: String, tasks: Int? = nil,
                             environment: [String: String] = [:]) throws -> DaemonUnderTest {
        try DaemonUnderTest(namespace: namespace, config: config, environment: environment,
                            launch: .init(user: "nobody", tasks: tasks, logLevel: nil))
    }

    /// The most memory resident at once since the start, in bytes (the kernel's VmHWM).
    func peakResidentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// Threads now.
    func threads() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }
}

/// `Tests/python/hostile_clients.py` in one of its holding modes: runs until `release()`.
final class HeldClients: Sendable {
    private let child: Child

    /// - Parameter user: run as this user (setpriv), else as the test (root).
    init(socket: String, _ arguments: [String], user: String? = nil) throws {
        let script = [Binaries.packageRoot + "/Tests/python/hostile_clients.py", socket] + arguments
        if let user {
            child = try Child("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=nogroup", "--clear-groups", "/usr/bin/python3"] + script,
                              input: .pipe, error: .discard)
        } else {
            child = try Child("/usr/bin/python3", script, input: .pipe, error: .discard)
        }
    }

    /// The "holding K" line: how many connections the daemon still keeps open (nil when the
    /// script ended or said nothing in two minutes).
    func holding() -> Int? {
        _ = waitUntil(timeout: 120) { !child.lines.isEmpty || !child.isRunning }
        let line = child.lines.first { $0.hasPrefix("holding") } ?? ""
        return line.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Closes its stdin: the script lets its connections go and ends.
    func release() {
        child.subprocess.closeInput()
        child.wait(timeout: 60)
    }
}

/// Runs hostile_clients.py to its end; its output.
private func hostile(_ socket: String, _ arguments: [String], user: String? = nil) throws -> String {
    let script = [Binaries.packageRoot + "/Tests/python/hostile_clients.py", socket] + arguments
    let command = user.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=nogroup", "--clear-groups", "/usr/bin/python3"] } ?? ["/usr/bin/python3"]
    return try run(command[0], Array(command.dropFirst()) + script, timeout: 120).stdout
}

/// No byte a terminal would act on: C0 controls other than newline, DEL.
private func rawControlBytes(_ text: String) -> [UInt8] {
    Array(text.utf8).filter { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }
}

extension SystemTests {
/// The attacks of an unfriendly local user, against the built reachd running as `nobody`.
@Suite(.serialized) struct HostileClientTests {
    static func config(probe: Bool = true, extra: String = "") -> String {
        """
        [Connectivity]
        Enabled=\(probe ? "yes" : "no")
        URL=http://10.77.0.1:8080/generate_204
        Interval=60
        Timeout=2
        [Cellular]
        ModemManager=no
        \(extra)
        """
    }

    /// Check calls that hang up at once, for names whose DNS never answers, under a task limit:
    /// reachd starts no thread per call, answers Busy past its limits, and `Probe()` answers
    /// during and after the flood.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces, another uid, task limits"))
    func checkFloodLeavesTheConnectivityCheckAnswering() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        // A resolver that never answers: every name look-up hangs until the resolver gives up.
        let etc = "/etc/netns/\(host.name)"
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        defer { _ = try? FileManager.default.removeItem(atPath: etc) }
        try "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n".write(toFile: etc + "/resolv.conf", atomically: true, encoding: .utf8)
        try "127.0.0.1 localhost\n".write(toFile: etc + "/hosts", atomically: true, encoding: .utf8)
        _ = try host.exec("nohup python3 -c \"import os,socket,time; os.closerange(3, 65536); s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 53)); time.sleep(300)\" >/dev/null 2>&1 &")

        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config(), tasks: 60)
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        let threadsBefore = daemon.threads()

        // 300 calls from root and 300 from nobody, each hanging up at once.
        let floods = [nil, "nobody"].map { user in
            Thread.detachNewThreadWithResult { try? hostile(daemon.socketPath, ["checkflood", "300", "never.test"], user: user) }
        }
        // A look-up during the flood is answered (its result, or Busy), not left waiting.
        let check = try daemon.reachctl(["check", "10.77.0.1"], timeout: 30)
        #expect(check.status == 0 || check.stderr.contains("reachd is busy"), "\(check.stdout) \(check.stderr)")
        let during = try daemon.reachctl(["probe"], timeout: 30)
        #expect(during.status == 0 && during.stdout.hasPrefix("internet: full"), "\(during.stdout) \(during.stderr)")
        for flood in floods { #expect(flood.wait()??.contains("done") == true) }
        // Look-up threads are made as needed, never more than MaxChecksInFlight (16); a thread
        // per call would have run into the task limit.
        #expect(daemon.threads() <= threadsBefore + 16 + 4, "threads \(threadsBefore) → \(daemon.threads())")
        print("figures: reachd threads \(threadsBefore) before a flood of 600 Check calls, \(daemon.threads()) after")
        let after = try daemon.reachctl(["probe", "--json"], timeout: 30)
        #expect(after.status == 0 && after.stdout.contains(#""result":"full""#), "\(after.stdout) \(after.stderr)")
        #expect(daemon.child.isRunning)
    }

    /// 1,000 connections each holding 65,000 bytes without a NUL, then 200 clients that send
    /// calls and never read: reachd stays under 64 MiB and a subscriber still gets its events.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces, another uid"))
    func memoryStaysBoundedUnderAbusiveClients() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config(probe: false))
        defer { daemon.stop() }
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 })

        let partial = try HeldClients(socket: daemon.socketPath, ["partial", "1000", "65000"])
        defer { partial.release() }
        let partialOpen = partial.holding()
        let nonReading = try HeldClients(socket: daemon.socketPath, ["nonreading", "200"], user: "nobody")
        defer { nonReading.release() }
        let nonReadingOpen = nonReading.holding()
        #expect(partialOpen != nil && nonReadingOpen != nil)

        var peak = daemon.peakResidentBytes()
        #expect(peak > 0 && peak < 64 << 20, "RSS \(peak >> 20) MiB")

        // A well-behaved subscriber is still served: a new link makes an event.
        try host.ip("link add rchv0 type veth peer name rchv1")
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains("rchv0") } }, "\(monitor.lines.suffix(3))")
        #expect(try daemon.reachctl(["status"]).status == 0)
        peak = daemon.peakResidentBytes()
        #expect(peak < 64 << 20, "RSS \(peak >> 20) MiB")
        print("figures: reachd RSS peak \(peak >> 20) MiB with 1000 connections holding 65000 bytes (\(partialOpen ?? -1) accepted) and 200 non-reading ones (\(nonReadingOpen ?? -1) accepted)")
        #expect(daemon.child.isRunning)
    }

    /// A hostile portal puts escape sequences into its redirect and status line: `portalUrl` is
    /// not published, and nothing reachctl prints carries a raw control byte.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces"))
    func hostilePortalReachesNoTerminal() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let redirect = Array("HTTP/1.1 302 Found\r\nLocation: http://portal.test/\u{1B}]0;owned\u{07}\u{1B}[2Jlogin\r\nContent-Length: 0\r\n\r\n".utf8)
        let server = try ProbeServer(in: uplink, mode: .raw(redirect))
        defer { server.stop() }
        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config(extra: "[Limits]\nProbeMinInterval=100ms"))
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: portal")) == true })

        var outputs: [String] = []
        for arguments in [["probe"], ["probe", "--json"], ["status"], ["status", "--json"]] {
            let result = try daemon.reachctl(arguments)
            outputs += [result.stdout, result.stderr]
        }
        let status = try WireJSON.decoder().decode(Status.self, from: Data(try daemon.reachctl(["status", "--json"]).stdout.utf8))
        #expect(status.connectivity == .portal && status.probe?.portalUrl == nil)
        #expect(status.probe?.error?.contains("\\x1b]0;owned\\x07") == true, "\(String(describing: status.probe?.error))")

        // A status line with escapes and a body of controls: the parse error is shown escaped.
        try server.set(.raw(Array("HTTP/1.1 2\u{1B}[31m00 \u{9B}OK\u{07}\r\n\r\n".utf8)))
        // A Probe() within ProbeMinInterval= shares the last verdict: ask until one meets the new answer.
        #expect(waitUntil(timeout: 10) {
            let probe = (try? daemon.reachctl(["probe", "--json"]))
                .flatMap { try? WireJSON.decoder().decode(Probe.self, from: Data($0.stdout.utf8)) }
            return probe != nil && probe?.error != status.probe?.error
        })
        for arguments in [["probe"], ["probe", "--json"], ["status"]] {
            let result = try daemon.reachctl(arguments)
            outputs += [result.stdout, result.stderr]
        }
        let monitor = try run(Binaries.reachctl, ["monitor", "--socket", daemon.socketPath], timeout: 2)
        outputs += [monitor.stdout, monitor.stderr]
        for output in outputs { #expect(rawControlBytes(output).isEmpty, "\(output.debugDescription)") }
        #expect(outputs.joined().contains("\\x1b"), "the hostile text is shown, escaped")
    }

    /// Calls nested 500 deep, 40 to a write (42,640 bytes), from `nobody` over and over: each
    /// is refused at the nesting limit as it is read, off the queue that delivers events, so a
    /// subscriber still gets a new link's event at once (before, each such call held that
    /// queue for over a second). A call that names a key twice is refused too.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces, another uid"))
    func nestedCallsDoNotDelayEvents() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config(probe: false))
        defer { daemon.stop() }
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 })

        let attack = try Child("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3",
                                                    Binaries.packageRoot + "/Tests/python/hostile_clients.py", daemon.socketPath,
                                                    "nested", "40", "500", "6"])
        defer { attack.signal(SIGTERM); attack.wait() }
        #expect(waitUntil(timeout: 10) { attack.lines.contains { $0.hasPrefix("sent 42640") } }, "\(attack.lines)")
        try host.ip("link add rchv0 type veth peer name rchv1")
        // The event's own fact, not a pause: the link's name in an event. The deadline is
        // generous; the attack held the queue for 40 s and more per round.
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains("rchv0") } }, "\(monitor.lines.suffix(3))")
        #expect(attack.wait(timeout: 30) == 0)
        #expect(attack.lines.contains { $0.hasPrefix("rounds ") }, "\(attack.lines)")
        #expect(daemon.child.stderr.contains("nested deeper than 16 levels"), "\(daemon.child.stderr.suffix(500))")

        let duplicate = try hostile(daemon.socketPath, ["duplicate"], user: "nobody")
        #expect(duplicate.hasPrefix("closed"), "\(duplicate)")
        // The log is rate-limited and the attack used its budget: asked again until a line
        // gets through.
        #expect(waitUntil(timeout: 15) {
            _ = try? hostile(daemon.socketPath, ["duplicate"], user: "nobody")
            return daemon.child.stderr.contains(#"duplicate key "host""#)
        }, "\(daemon.child.stderr.suffix(500))")
        #expect(try daemon.reachctl(["status"]).status == 0)
        #expect(daemon.child.isRunning)
    }

    /// 3,000 `Simulate` calls from `nobody`, who may not simulate: each is refused, the log
    /// says so a few times and then counts what it held back, and a subscriber is still served.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces, another uid"))
    func refusedSimulateFloodIsLoggedAFewTimes() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config(probe: false))
        defer { daemon.stop() }
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 })

        let started = Date()
        let flood = try hostile(daemon.socketPath, ["simulateflood", "3000"], user: "nobody")
        let elapsed = Date().timeIntervalSince(started)
        #expect(flood.contains("denied 3000"), "\(flood)")
        let refusals = daemon.child.stderr.components(separatedBy: "Simulate refused").count - 1
        print("figures: 3000 refused Simulate calls in \(elapsed) s made \(refusals) log lines")
        // A burst of 5, then one a second.
        #expect(refusals >= 1 && Double(refusals) <= 5 + elapsed.rounded(.up) + 1, "\(refusals) lines in \(elapsed) s")
        // The next line let through says how many were held back.
        #expect(waitUntil(timeout: 10) {
            _ = try? hostile(daemon.socketPath, ["simulateflood", "1"], user: "nobody")
            return daemon.child.stderr.contains("similar messages suppressed)")
        }, "\(daemon.child.stderr.suffix(300))")
        try host.ip("link add rchv0 type veth peer name rchv1")
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains("rchv0") } }, "\(monitor.lines.suffix(3))")
        #expect(daemon.child.isRunning)
    }

    /// 200 `Probe()` calls in a row share verdicts: at most one HTTP request a second reaches
    /// the server.
    @Test(.enabled(if: getuid() == 0, "needs root: namespaces"))
    func probeFloodMakesAtMostOneRequestASecond() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: Self.config())
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        let before = server.requests.count
        let started = Date()
        // Spread over about two seconds, so that more than one check could be due.
        let flood = try hostile(daemon.socketPath, ["probeflood", "200", "0.01"], user: "nobody")
        let elapsed = Date().timeIntervalSince(started)
        #expect(flood.contains("answered 200"), "\(flood)")
        let made = server.requests.count - before
        print("figures: 200 Probe() calls in \(elapsed) s made \(made) HTTP requests")
        #expect(made >= 0 && Double(made) <= elapsed.rounded(.up) + 1, "\(made) requests in \(elapsed) s")
    }
}
}

extension Thread {
    /// Runs `body` on a new thread; `wait()` returns its result.
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread.detachNewThread { result.set(body()) }
        return result
    }
}

final class ThreadResult<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var value: T?
    func set(_ v: T) { value = v; done.signal() }
    func wait() -> T? { done.wait(); return value }
}
