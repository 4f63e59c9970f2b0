import Foundation
import ReachabilitySystem
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

/// A fresh short directory for a socket (`sun_path` holds 107 bytes): `/tmp/rch<pid>-XXXXXX`,
/// named with the test process's pid (`TestResources`) so that a later run sweeps it up when
/// this one dies before removing it.
public func temporaryDirectory() throws -> String {
    TestResources.sweepOnce()
    var template = Array("/tmp/\(TestResources.prefix)XXXXXX".utf8CString)
    guard let path = mkdtemp(&template) else { throw Errno.current("mkdtemp", path: "/tmp/\(TestResources.prefix)XXXXXX") }
    return String(cString: path)
}

/// A child process of a test, started with `childEnvironment()` and stdin from /dev/null:
/// its stdout collected line by line as it comes, its stderr as text. Killed (SIGKILL) and
/// reaped when the value goes. A `Subprocess` (posix_spawn), never Foundation's `Process`,
/// which crashes at random on this toolchain.
public final class Child: Sendable {
    /// The process.
    public let subprocess: Subprocess

    /// Starts `executable` (a path; no `PATH` search) with `arguments`; `environment` (else the
    /// test process's) goes through `childEnvironment()`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                input: Subprocess.Input = .null, output: Subprocess.Output = .lines, error: Subprocess.ErrorOutput = .lines,
                newProcessGroup: Bool = false) throws {
        subprocess = try Subprocess(executable, arguments: arguments,
                                    environment: environmentList(childEnvironment(environment ?? ProcessInfo.processInfo.environment)),
                                    input: input, output: output, error: error, newProcessGroup: newProcessGroup)
    }

    /// Its process id.
    public var pid: pid_t { subprocess.pid }
    /// The complete lines of its stdout so far (and, once it has ended, a last one without a newline).
    public var lines: [String] { subprocess.lines(.output) }
    /// Its stderr so far.
    public var stderr: String { subprocess.text(.error) }
    public var isRunning: Bool { subprocess.isRunning }
    /// Its exit status (the signal's number when a signal ended it), nil while it runs.
    public var status: Int32? { subprocess.termination.map(statusCode) }

    /// Sends signal `number`; nothing once it has ended.
    public func signal(_ number: Int32) { try? subprocess.signal(number) }

    /// Waits for the exit (killing it with SIGKILL after `timeout`) and for all output; returns
    /// the exit status, or the number of the signal that ended it.
    @discardableResult
    public func wait(timeout: TimeInterval = 10) -> Int32 {
        switch subprocess.wait(timeout: timeout) {
        case .exited(let status): return status
        case .signaled(let signal): return signal
        case .timedOut: return statusCode(subprocess.killAndWait())
        }
    }

    /// SIGKILL when still running, and the wait for its end. Not SIGTERM: a test may have
    /// given it a mask that blocks SIGTERM (python's own handlers do).
    public func killAndWait() { subprocess.killAndWait() }
}

/// Starts `executable` as a test's child with its output discarded, and waits up to `timeout`
/// for it to create `path`, its sign of being ready.
/// - Returns: the child; nil when `path` did not appear in time (the child is killed then).
public func startChild(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                       andWaitFor path: String, timeout: TimeInterval) throws -> Child? {
    let child = try Child(executable, arguments, environment: environment, output: .discard, error: .discard)
    guard waitUntil(timeout: timeout, { FileManager.default.fileExists(atPath: path) }) else {
        child.killAndWait()
        return nil
    }
    return child
}

/// `NAME=value` for each variable, sorted by name.
public func environmentList(_ environment: [String: String]) -> [String] {
    environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
}

/// The exit status, or the number of the signal that ended it (as a shell's `$?` less 128).
public func statusCode(_ termination: Subprocess.Termination) -> Int32 {
    switch termination {
    case .exited(let status): return status
    case .signaled(let signal): return signal
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
