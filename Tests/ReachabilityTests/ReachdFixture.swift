import Foundation
import Reachability
import ReachabilityClient
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real reachd, started inside a test namespace (`ip netns exec NS reachd --socket PATH`).
///
/// The binary comes from `REACHD_BIN_DIR` (the Makefile passes `swift build --show-bin-path`),
/// else `.build/debug` of this package. The daemon's stderr goes to `logPath`, printed when a
/// test fails to see it start.
final class ReachdDaemon: @unchecked Sendable {
    let namespace: TestNamespace
    let socketPath: String
    let configPath: String?
    let logPath: String
    private var process: Process?

    static var binary: String {
        if let dir = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"], !dir.isEmpty { return "\(dir)/reachd" }
        // Tests/ReachabilityTests/ReachdFixture.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/reachd").path
    }

    /// - Parameter config: the text of a reachd.conf, passed with `--config` (the connectivity
    ///   check is always pointed at the test's own server or disabled).
    init(in namespace: TestNamespace, directory: TemporaryDirectory, config: String = ReachdDaemon.noProbe) throws {
        self.namespace = namespace
        socketPath = directory.path + "/io.reachd.Reachability"
        let configPath = directory.path + "/reachd.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        self.configPath = configPath
        logPath = directory.path + "/reachd.log"
        try start()
    }

    /// No connectivity check: tests never let reachd talk to the outside.
    static let noProbe = "[Connectivity]\nEnabled=no\n"

    /// Starts (or restarts) the daemon and waits for its socket to answer.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        var arguments = ["netns", "exec", namespace.name, Self.binary, "--socket", socketPath]
        if let configPath { arguments += ["--config", configPath] }
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
        let answered = waitUntil(timeout: 15) {
            (try? VarlinkProbe.answers(socketPath)) == true || !process.isRunning
        }
        guard answered, process.isRunning else {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw FixtureError("reachd did not start (\(Self.binary)): \(text)")
        }
    }

    /// SIGTERM and wait: a clean stop removes the socket.
    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        // Never hang a test on a daemon that does not stop.
        if !waitUntil(timeout: 10, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    deinit { stop() }
}

/// Does a reachd answer `GetStatus` at `path`?
enum VarlinkProbe {
    static func answers(_ path: String) throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let connection = try VarlinkConnection(socketPath: path, timeout: 2)
        defer { connection.close() }
        _ = try connection.call(VarlinkCall(method: "io.reachd.Reachability.GetStatus"))
        return true
    }
}

/// A directory under /tmp, removed by `remove()` / deinit.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String
    init() throws {
        var template = Array("/tmp/reachd-api-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        guard let made else { throw FixtureError("mkdtemp: \(String(cString: strerror(errno)))") }
        path = made
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
    deinit { remove() }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects what callbacks and notifications saw, from any thread.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []
    func append(_ value: Value) { lock.withLock { values.append(value) } }
    var all: [Value] { lock.withLock { values } }
    var count: Int { lock.withLock { values.count } }
}

/// A host namespace with an uplink namespace behind `eth0` (10.X.0.2 → gateway 10.X.0.1).
struct TestNetwork {
    let host: TestNamespace
    let uplinkNamespace: TestNamespace
    let uplink: VethUplink

    init(subnet: Int, inner: String = "eth0") throws {
        host = try TestNamespace(tag: "h")
        uplinkNamespace = try TestNamespace(tag: "u")
        uplink = try VethUplink(host: host, uplink: uplinkNamespace, inner: inner, subnet: subnet)
    }

    func destroy() {
        host.destroy()
        uplinkNamespace.destroy()
    }
}

/// Lets stray duplicate callbacks arrive before a test counts them (not a timing assertion:
/// the test passes however long delivery takes, it only fails on extra deliveries).
func settle() async { try? await Task.sleep(nanoseconds: 500_000_000) }

/// Polls `condition` every 20 ms without blocking a thread of the cooperative pool.
func eventually(timeout: TimeInterval = 10, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// What one delivery carried: the callback that ran and the status it read.
struct Delivery: Sendable, Equatable {
    var reachable: Bool
    var status: NetworkStatus
    var connection: Reachability.Connection
}

/// Wires a Reachability's callbacks and its notification into recorders.
final class Observed: @unchecked Sendable {
    let callbacks = Recorder<Delivery>()
    let notifications = Recorder<NetworkStatus>()
    private var token: NSObjectProtocol?

    init(_ reachability: Reachability) {
        reachability.whenReachable = { [callbacks] r in
            callbacks.append(Delivery(reachable: true, status: r.currentReachabilityStatus, connection: r.connection))
        }
        reachability.whenUnreachable = { [callbacks] r in
            callbacks.append(Delivery(reachable: false, status: r.currentReachabilityStatus, connection: r.connection))
        }
        token = NotificationCenter.default.addObserver(forName: .reachabilityChanged, object: reachability, queue: nil) { [notifications] note in
            guard let r = note.object as? Reachability else { return }
            notifications.append(r.currentReachabilityStatus)
        }
    }

    func stopObserving() {
        if let token { NotificationCenter.default.removeObserver(token) }
        token = nil
    }

    deinit { stopObserving() }
}

/// `values` without consecutive repeats.
func collapsed<T: Equatable>(_ values: [T]) -> [T] {
    values.reduce(into: []) { result, value in if result.last != value { result.append(value) } }
}
