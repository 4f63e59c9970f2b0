import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where the built reachd and reachctl are: REACHD_BIN_DIR (the Makefile sets it), else
/// .build/debug of this package, else `swift build --show-bin-path`.
enum Binaries {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let directory: String = {
        if let dir = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"], !dir.isEmpty { return dir }
        let debug = packageRoot + "/.build/debug"
        if FileManager.default.isExecutableFile(atPath: debug + "/reachd") { return debug }
        let shown = (try? sh("cd '\(packageRoot)' && swift build --show-bin-path", check: false).output) ?? ""
        return shown.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    static var reachd: String { directory + "/reachd" }
    static var reachctl: String { directory + "/reachctl" }
    static var python: String { packageRoot + "/.venv/bin/python" }
    static var pythonClient: String { packageRoot + "/Tests/python/varlink_client.py" }
}

/// A test set-up step that failed, with what it printed.
struct SetupError: Error, CustomStringConvertible {
    let description: String
}

/// A fresh short directory for a socket (`sun_path` holds 107 bytes).
func temporaryDirectory() throws -> String {
    var template = Array("/tmp/ri-XXXXXX".utf8CString)
    guard let path = mkdtemp(&template) else { throw SetupError(description: "mkdtemp: \(String(cString: strerror(errno)))") }
    return String(cString: path)
}

/// A child process whose stdout is collected line by line as it comes, and whose stderr goes
/// to a string.
final class Child: @unchecked Sendable {
    let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _stderr = Data()
    private let readersDone = DispatchGroup()

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = childEnvironment(environment ?? ProcessInfo.processInfo.environment)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        startReader(out.fileHandleForReading) { [self] data in
            // Lines arrive whole or in pieces; keep the partial tail until its newline comes.
            lock.withLock { appendOutput(data) }
        }
        startReader(err.fileHandleForReading) { [self] data in lock.withLock { _stderr.append(data) } }
    }

    private var partial = Data()
    private func appendOutput(_ data: Data) {
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            _lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial = Data(partial[(newline + 1)...])
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

    var lines: [String] { lock.withLock { _lines } }
    var stderr: String { lock.withLock { String(decoding: _stderr, as: UTF8.self) } }
    var isRunning: Bool { process.isRunning }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit (killing it after `timeout`) and for all output; returns the status.
    @discardableResult
    func wait(timeout: TimeInterval = 10) -> Int32 {
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
func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 20,
         environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let child = try Child(executable, arguments, environment: environment)
    let status = child.wait(timeout: timeout)
    return (status, child.lines.joined(separator: "\n"), child.stderr)
}

/// reachd running in a network namespace (`ip netns exec`), on a socket in its own directory.
final class DaemonUnderTest: @unchecked Sendable {
    /// The connectivity check off: tests never let it reach out to the default URL.
    static let defaultConfig = "[Connectivity]\nEnabled=no\n"

    let namespace: TestNamespace
    let directory: String
    let socketPath: String
    let configPath: String
    private(set) var child: Child

    /// `config`: the daemon's reachd.conf (`--config`); by default the connectivity check is off.
    init(namespace: TestNamespace, directory: String? = nil, config: String = DaemonUnderTest.defaultConfig) throws {
        self.namespace = namespace
        self.directory = try directory ?? temporaryDirectory()
        socketPath = self.directory + "/io.reachd.Reachability"
        configPath = self.directory + "/reachd.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        child = try Self.launch(namespace: namespace, socketPath: socketPath, configPath: configPath)
        try waitForSocket()
    }

    private static func launch(namespace: TestNamespace, socketPath: String, configPath: String) throws -> Child {
        try Child(ipCommand, ["netns", "exec", namespace.name, Binaries.reachd, "--socket", socketPath,
                              "--config", configPath, "--log-level", "debug"])
    }

    private func waitForSocket() throws {
        let up = waitUntil(timeout: 10) {
            (try? run(Binaries.reachctl, ["status", "--socket", socketPath], timeout: 5).status) == 0 || !child.isRunning
        }
        guard up, child.isRunning else {
            throw SetupError(description: "reachd --socket \(socketPath) did not come up (exit \(child.wait(timeout: 1))): \(child.stderr)")
        }
    }

    /// SIGTERM, and the exit status.
    @discardableResult
    func stop() -> Int32 {
        child.signal(SIGTERM)
        return child.wait(timeout: 10)
    }

    /// Stops and starts the daemon again on the same socket.
    func restart() throws {
        stop()
        child = try Self.launch(namespace: namespace, socketPath: socketPath, configPath: configPath)
        try waitForSocket()
    }

    func reachctl(_ arguments: [String], timeout: TimeInterval = 20) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.reachctl, arguments + ["--socket", socketPath], timeout: timeout)
    }

    deinit {
        if child.isRunning { stop() }
        _ = try? sh("rm -rf '\(directory)'", check: false)
    }
}

/// iproute2's `ip`.
let ipCommand = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip"
