import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// reachd running in a network namespace (`ip netns exec`), on a socket in its own directory.
/// The one daemon fixture of the test targets: it writes the configuration, starts the binary
/// from `Binaries` (REACHD_BIN_DIR), waits until its socket answers, and stops it; `Launch`
/// says how (as another user, under a task limit, under a stand-in for systemd).
public final class DaemonUnderTest: @unchecked Sendable {
    /// The connectivity check off (tests never let it reach out to the default URL), no
    /// ModemManager and no NetworkManager (a test daemon never asks the machine's own system bus),
    /// and no DHCP leases (the machine's own, by interface index, say nothing of a namespace's links).
    public static let defaultConfig = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n"
        + "[Interfaces]\nNetworkManager=no\nLeaseDirectory=/nonexistent/reachd-test-leases\n"

    /// How reachd is started, besides its socket and configuration.
    public struct Launch: Sendable {
        /// Run as this user (`setpriv`, group `nogroup`, no supplementary groups), as under
        /// reachd.service; the directory is then the user's and open to everyone, so that every
        /// user may reach the socket. Nil: as the test (root).
        public var user: String?
        /// At most this many tasks (`prlimit --nproc`, as `TasksMax=`).
        public var tasks: Int?
        /// `--log-level`; nil leaves the daemon's own default.
        public var logLevel: String?
        /// Stand in for systemd: a `NotifyListener` in the directory, its path in reachd's
        /// NOTIFY_SOCKET (`notifications`).
        public var notify: Bool
        /// `NAME=value`, set for reachd alone (`env`): the sd-daemon variables, which `Child`
        /// drops from the environment it passes on (WATCHDOG_USEC), or JOURNAL_STREAM.
        public var variables: [String]

        /// By default: as root, no task limit, `--log-level debug`, no notify socket, no variables.
        public init(user: String? = nil, tasks: Int? = nil, logLevel: String? = "debug", notify: Bool = false,
                    variables: [String] = []) {
            self.user = user; self.tasks = tasks; self.logLevel = logLevel; self.notify = notify; self.variables = variables
        }

        /// The command line: `ip netns exec NS [prlimit] [setpriv] [env] reachd …`, each of which
        /// execs the next, so that the child's pid is reachd's.
        func command(namespace: TestNamespace, socketPath: String, configPath: String, notifyPath: String?) -> [String] {
            var command = ["netns", "exec", namespace.name]
            if let tasks { command += ["prlimit", "--nproc=\(tasks):\(tasks)"] }
            if let user { command += ["setpriv", "--reuid=\(user)", "--regid=nogroup", "--clear-groups"] }
            let set = (notifyPath.map { ["NOTIFY_SOCKET=\($0)"] } ?? []) + variables
            if !set.isEmpty { command += ["/usr/bin/env"] + set }
            command += [Binaries.reachd, "--socket", socketPath, "--config", configPath]
            if let logLevel { command += ["--log-level", logLevel] }
            return command
        }
    }

    /// The namespace reachd runs in.
    public let namespace: TestNamespace
    /// Holds the socket, the configuration and (with `Launch.notify`) the notify socket.
    public let directory: String
    /// reachd's varlink socket (`--socket`).
    public let socketPath: String
    /// reachd's configuration file (`--config`).
    public let configPath: String
    /// Added to the daemon's environment (e.g. DBUS_SYSTEM_BUS_ADDRESS of a private bus), with
    /// STATE_DIRECTORY set to `directory` unless given.
    public let environment: [String: String]
    /// How reachd is started, the first time and after `stop()`.
    public let launch: Launch
    /// What reachd sent to systemd's notify socket, with `Launch.notify`.
    public let notifications: NotifyListener?
    /// The running reachd (its output, its exit); a new one after `restart()`.
    public private(set) var child: Child

    /// `config`: the daemon's reachd.conf (`--config`); by default the connectivity check and
    /// ModemManager are off. `directory`: where the socket and the configuration go (removed
    /// with the fixture); by default a new one.
    public init(namespace: TestNamespace, directory: String? = nil, config: String = DaemonUnderTest.defaultConfig,
                environment: [String: String] = [:], launch: Launch = Launch()) throws {
        self.namespace = namespace
        let directory = try directory ?? temporaryDirectory()
        self.directory = directory
        socketPath = directory + "/io.reachd.Reachability"
        configPath = directory + "/reachd.conf"
        // The last event number goes beside the socket, not to the machine's /var/lib/reachd.
        self.environment = ["STATE_DIRECTORY": directory].merging(environment) { $1 }
        self.launch = launch
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        notifications = launch.notify ? try NotifyListener(path: directory + "/notify") : nil
        if let user = launch.user { try sh("chown -R '\(user)' '\(directory)' && chmod 0755 '\(directory)'") }
        child = try Self.start(namespace: namespace, socketPath: socketPath, configPath: configPath, environment: self.environment,
                               launch: launch, notifyPath: notifications?.path)
        try waitForSocket()
    }

    private static func start(namespace: TestNamespace, socketPath: String, configPath: String, environment: [String: String],
                              launch: Launch, notifyPath: String?) throws -> Child {
        try Child(ipCommand, launch.command(namespace: namespace, socketPath: socketPath, configPath: configPath, notifyPath: notifyPath),
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

    /// The daemon's process (`ip netns exec`, `prlimit`, `setpriv` and `env` exec into it).
    public var pid: Int32 { child.pid }

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
        child = try Self.start(namespace: namespace, socketPath: socketPath, configPath: configPath, environment: environment,
                               launch: launch, notifyPath: notifications?.path)
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

    /// Writes `config` (by default the test configuration: no connectivity check, no
    /// ModemManager) to `directory/reachd.conf`, for a reachd a test starts itself; its path.
    public static func writeConfig(in directory: String, _ config: String = DaemonUnderTest.defaultConfig) throws -> String {
        let path = directory + "/reachd.conf"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return path
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

    /// Runs reachctl with `arguments` against this daemon's socket, to its end.
    public func reachctl(_ arguments: [String], timeout: TimeInterval = 20) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Binaries.reachctl, arguments + ["--socket", socketPath], timeout: timeout)
    }

    deinit {
        if child.isRunning { stop() }
        _ = try? sh("rm -rf '\(directory)'", check: false)
    }
}

/// A host namespace with an uplink namespace behind `eth0` (10.X.0.2 → gateway 10.X.0.1).
public struct TestNetwork: Sendable {
    /// The machine under test.
    public let host: TestNamespace
    /// Its network, behind the veth.
    public let uplinkNamespace: TestNamespace
    /// The veth pair: `inner` in `host`, the gateway's side in `uplinkNamespace`.
    public let uplink: VethUplink

    /// Both namespaces and the veth pair, `inner` online with a default route via 10.`subnet`.0.1.
    public init(subnet: Int, inner: String = "eth0") throws {
        host = try TestNamespace(tag: "h")
        uplinkNamespace = try TestNamespace(tag: "u")
        uplink = try VethUplink(host: host, uplink: uplinkNamespace, inner: inner, subnet: subnet)
    }

    /// A new network with reachd in its host namespace (`config`, by default the test
    /// configuration), its socket answering. When done: `daemon.stop()` and `network.destroy()`.
    public static func withDaemon(subnet: Int, config: String = DaemonUnderTest.defaultConfig) throws -> (TestNetwork, DaemonUnderTest) {
        let network = try TestNetwork(subnet: subnet)
        do {
            return (network, try DaemonUnderTest(namespace: network.host, config: config))
        } catch {
            network.destroy()
            throw error
        }
    }

    /// Deletes both namespaces and every link in them.
    public func destroy() {
        host.destroy()
        uplinkNamespace.destroy()
    }
}

/// systemd's notify socket, played by `Tests/python/notify_listener.py`: what reachd sends there
/// (`READY=1`, `STATUS=…`, `WATCHDOG=1`), a line each. Killed when the value is freed.
/// `DaemonUnderTest` starts one for a daemon launched with `Launch.notify`.
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
}
