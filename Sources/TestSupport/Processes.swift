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
        process.killAndWait()
    }
}

/// Runs a command to its end: exit status, stdout, stderr.
public func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 20,
         environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try Child(executable, arguments, environment: environment)
    let status = child.wait(timeout: timeout)
    return (status, child.lines.joined(separator: "\n"), child.stderr)
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

extension Process {
    /// Starts `executable` with `arguments` as a test's child (`childEnvironment()`, its output
    /// discarded) and waits up to `timeout` for it to create `path`, its sign of being ready.
    /// - Returns: false when `path` did not appear in time (the process may still run).
    public func start(_ executable: String, _ arguments: [String], andWaitFor path: String, timeout: TimeInterval) throws -> Bool {
        executableURL = URL(fileURLWithPath: executable)
        environment = childEnvironment()
        self.arguments = arguments
        standardOutput = FileHandle.nullDevice
        standardError = FileHandle.nullDevice
        try run()
        return waitUntil(timeout: timeout) { FileManager.default.fileExists(atPath: path) }
    }
}

extension Process {
    /// SIGKILL, when still running, and the wait for its end. Not SIGTERM: a child spawned from a
    /// Dispatch worker thread inherits that thread's blocked signals, SIGTERM included.
    public func killAndWait() {
        guard isRunning else { return }
        kill(processIdentifier, SIGKILL)
        waitUntilExit()
    }
}
