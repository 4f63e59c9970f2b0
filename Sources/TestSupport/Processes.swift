import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where the built reachd and reachctl are: REACHD_BIN_DIR (the Makefile sets it), else
/// .build/debug of this package, else `swift build --show-bin-path`.
public enum Binaries {
    public static var packageRoot: String { Paths.packageRoot }

    public static let directory: String = {
        if let dir = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"], !dir.isEmpty { return dir }
        let debug = packageRoot + "/.build/debug"
        if FileManager.default.isExecutableFile(atPath: debug + "/reachd") { return debug }
        let shown = (try? sh("cd '\(packageRoot)' && swift build --show-bin-path", check: false).output) ?? ""
        return shown.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    public static var reachd: String { directory + "/reachd" }
    public static var reachctl: String { directory + "/reachctl" }
    public static var reachdDispatcher: String { directory + "/reachd-dispatcher" }
    public static var python: String { packageRoot + "/.venv/bin/python" }
    public static var pythonClient: String { packageRoot + "/Tests/python/varlink_client.py" }
}

/// A test set-up step that failed, with what it printed.
public struct SetupError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
    public init(_ description: String) { self.description = description }
}

/// A fresh short directory for a socket (`sun_path` holds 107 bytes).
public func temporaryDirectory() throws -> String {
    var template = Array("/tmp/ri-XXXXXX".utf8CString)
    guard let path = mkdtemp(&template) else { throw SetupError(description: "mkdtemp: \(String(cString: strerror(errno)))") }
    return String(cString: path)
}

/// A child process whose stdout is collected line by line as it comes, and whose stderr goes
/// to a string.
public final class Child: @unchecked Sendable {
    public let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    /// Complete stdout lines, the partial tail of stdout, and stderr.
    private let output = Mutex<(lines: [String], partial: Data, stderr: Data)>(([], Data(), Data()))
    private let readersDone = DispatchGroup()

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = childEnvironment(environment ?? ProcessInfo.processInfo.environment)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        startReader(out.fileHandleForReading) { [self] data in
            // Lines arrive whole or in pieces; keep the partial tail until its newline comes.
            output.withLock { Self.appendOutput(data, to: &$0) }
        }
        startReader(err.fileHandleForReading) { [self] data in output.withLock { $0.stderr.append(data) } }
    }

    private static func appendOutput(_ data: Data, to output: inout (lines: [String], partial: Data, stderr: Data)) {
        output.partial.append(data)
        while let newline = output.partial.firstIndex(of: UInt8(ascii: "\n")) {
            output.lines.append(String(decoding: output.partial[output.partial.startIndex..<newline], as: UTF8.self))
            output.partial = Data(output.partial[(newline + 1)...])
        }
    }

    private func startReader(_ handle: FileHandle, _ sink: @escaping @Sendable (Data) -> Void) {
        readersDone.enter()
        let group = readersDone
        Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                sink(data)
            }
            group.leave()
        }.start()
    }

    public var lines: [String] { output.withLock { $0.lines } }
    public var stderr: String { output.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
    public var isRunning: Bool { process.isRunning }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit (killing it after `timeout`) and for all output; returns the status.
    @discardableResult
    public func wait(timeout: TimeInterval = 10) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = readersDone.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}

/// Runs a command to its end: exit status, stdout, stderr.
public func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 20,
         environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try Child(executable, arguments, environment: environment)
    let status = child.wait(timeout: timeout)
    return (status, child.lines.joined(separator: "\n"), child.stderr)
}

/// reachd running in a network namespace (`ip netns exec`), on a socket in its own directory.
/// The one daemon fixture of the test targets: the binary comes from `Binaries` (REACHD_BIN_DIR).
public final class DaemonUnderTest: @unchecked Sendable {
    /// The connectivity check off (tests never let it reach out to the default URL) and no
    /// ModemManager (a test daemon never asks the machine's own system bus).
    public static let defaultConfig = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n"

    public let namespace: TestNamespace
    public let directory: String
    public let socketPath: String
    public let configPath: String
    /// Added to the daemon's environment (e.g. DBUS_SYSTEM_BUS_ADDRESS of a private bus).
    public let environment: [String: String]
    public private(set) var child: Child

    /// `config`: the daemon's reachd.conf (`--config`); by default the connectivity check and
    /// ModemManager are off.
    public init(namespace: TestNamespace, directory: String? = nil, config: String = DaemonUnderTest.defaultConfig,
                environment: [String: String] = [:]) throws {
        self.namespace = namespace
        self.directory = try directory ?? temporaryDirectory()
        socketPath = self.directory + "/io.reachd.Reachability"
        configPath = self.directory + "/reachd.conf"
        self.environment = environment
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        child = try Self.launch(namespace: namespace, socketPath: socketPath, configPath: configPath, environment: environment)
        try waitForSocket()
    }

    private static func launch(namespace: TestNamespace, socketPath: String, configPath: String,
                               environment: [String: String]) throws -> Child {
        try Child(ipCommand, ["netns", "exec", namespace.name, Binaries.reachd, "--socket", socketPath,
                              "--config", configPath, "--log-level", "debug"],
                  environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    private func waitForSocket() throws {
        let up = waitUntil(timeout: 15) {
            (try? run(Binaries.reachctl, ["status", "--socket", socketPath], timeout: 5).status) == 0 || !child.isRunning
        }
        guard up, child.isRunning else {
            throw SetupError(description: "reachd --socket \(socketPath) did not come up (exit \(child.wait(timeout: 1))): \(child.stderr)")
        }
    }

    /// SIGTERM, and the exit status (0 when it was not running).
    @discardableResult
    public func stop() -> Int32 {
        guard child.isRunning else { return child.wait(timeout: 1) }
        child.signal(SIGTERM)
        return child.wait(timeout: 10)
    }

    /// Starts the daemon again on the same socket and configuration, after `stop()`.
    public func start() throws {
        if child.isRunning { return }
        child = try Self.launch(namespace: namespace, socketPath: socketPath, configPath: configPath, environment: environment)
        try waitForSocket()
    }

    /// Stops and starts the daemon again on the same socket.
    public func restart() throws {
        stop()
        try start()
    }

    /// Rewrites the configuration file (`reload()` makes the daemon read it).
    public func writeConfig(_ text: String) throws {
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// The connections the daemon holds open on its socket (`ss`). A client that has gone
    /// leaves its connection here until the daemon has read the end and closed it: when the
    /// count has dropped, the daemon can send that client nothing more.
    public var openConnections: Int {
        let lines = (try? sh("ss -xHn src '\(socketPath)'", check: false).output) ?? ""
        return lines.split(separator: "\n").filter { $0.contains(socketPath) }.count
    }

    /// SIGHUP: reload the configuration.
    public func reload() { child.signal(SIGHUP) }

    public func reachctl(_ arguments: [String], timeout: TimeInterval = 20) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.reachctl, arguments + ["--socket", socketPath], timeout: timeout)
    }

    deinit {
        if child.isRunning { stop() }
        _ = try? sh("rm -rf '\(directory)'", check: false)
    }
}

/// A directory under /tmp (short: a socket's `sun_path` holds 107 bytes), removed by
/// `remove()` or deinit.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String
    public init() throws { path = try temporaryDirectory() }
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
    deinit { remove() }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes, without blocking a thread
/// of the cooperative pool.
public func eventually(timeout: TimeInterval = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// iproute2's `ip`.
public let ipCommand = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip"

/// Collects values (callbacks, notifications, events) from any thread.
public final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let values = Mutex<[Value]>([])
    public init() {}
    public func append(_ value: Value) { values.withLock { $0.append(value) } }
    public var all: [Value] { values.withLock { $0 } }
    public var count: Int { values.withLock { $0.count } }
}

/// systemd's notify socket, played by `Tests/python/notify_listener.py`: what reachd sends there
/// (`READY=1`, `STATUS=…`, `WATCHDOG=1`), a line each. Killed when the value is freed.
public final class NotifyListener: @unchecked Sendable {
    /// The datagram socket to hand over as NOTIFY_SOCKET.
    public let path: String
    private let child: Child

    /// Starts the listener on `path` and waits until it is bound.
    public init(path: String) throws {
        self.path = path
        child = try Child(Binaries.python, [Binaries.packageRoot + "/Tests/python/notify_listener.py", path])
        guard waitUntil(timeout: 10, { child.lines.contains("ready") }) else {
            child.signal(SIGKILL)
            child.wait(timeout: 5)
            throw SetupError(description: "notify_listener.py did not bind \(path): \(child.stderr)")
        }
    }

    deinit {
        child.signal(SIGKILL)
        child.wait(timeout: 5)
    }

    /// What arrived so far (the listener's own "ready" first).
    public var lines: [String] { child.lines }

    /// Starts reachd in `namespace` with NOTIFY_SOCKET (and `environment`, `NAME=value` each) set
    /// for it alone: `Child` drops the systemd variables from what it passes on, so `env` sets them.
    public func startReachd(in namespace: TestNamespace, arguments: [String], environment: [String] = []) throws -> Child {
        try Child(ipCommand, ["netns", "exec", namespace.name, "/usr/bin/env", "NOTIFY_SOCKET=\(path)"] + environment
                  + [Binaries.reachd] + arguments)
    }
}
