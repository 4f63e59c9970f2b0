import Foundation
import ReachabilitySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command with `/bin/sh -c` and returns its exit status and output (stdout and stderr
/// as one stream, in the order written). It returns when the shell has ended: a program the
/// command leaves running in the background does not hold it up.
@discardableResult
public func sh(_ command: String, check: Bool = true) throws -> (status: Int32, output: String) {
    let child = try Subprocess("/bin/sh", arguments: ["-c", command], environment: environmentList(childEnvironment()),
                               error: .intoOutput)
    let status: Int32
    switch child.wait() {
    case .exited(let code): status = code
    case .signaled(let signal): status = signal
    case .timedOut: status = statusCode(child.killAndWait())   // wait() without a deadline never times out
    }
    let output = child.text(.output)
    if check && status != 0 {
        throw ShellError(command: command, status: status, output: output)
    }
    return (status, output)
}

/// The environment for a child of a test: the test process's, without the sd-daemon variables
/// (a reachd started by a test is never under the test's systemd), and with a system bus that
/// does not exist, so that no child asks the machine's own ModemManager. A test that gives a child
/// a bus of its own (a `PrivateBus`) passes its DBUS_SYSTEM_BUS_ADDRESS in `base`.
public func childEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
    var environment = base.filter { !["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"].contains($0.key) }
    let inherited = ProcessInfo.processInfo.environment[systemBusVariable]
    if environment[systemBusVariable] == nil || environment[systemBusVariable] == inherited {
        environment[systemBusVariable] = noSystemBus
    }
    // A reachd started by a test keeps its last event number in a directory of this test
    // process's (swept with it), never in the machine's /var/lib/reachd.
    if environment["STATE_DIRECTORY"] == nil { environment["STATE_DIRECTORY"] = testStateDirectory }
    return environment
}

/// Where the daemons a test process starts keep their state, unless a test names its own.
public let testStateDirectory: String = {
    TestResources.sweepOnce()
    let path = "/tmp/\(TestResources.prefix)state"
    mkdir(path, 0o777)
    chmod(path, 0o777)   // a daemon under test may run as `nobody`
    return path
}()

/// The variable sd-bus and libdbus read the system bus's address from.
public let systemBusVariable = "DBUS_SYSTEM_BUS_ADDRESS"
/// A system bus address where no bus is.
public let noSystemBus = "unix:path=/nonexistent/reachd-tests-use-no-system-bus"

public struct ShellError: Error, CustomStringConvertible {
    public let command: String
    public let status: Int32
    public let output: String
    public var description: String { "`\(command)` exited \(status): \(output)" }
}

/// True when the tests may create network namespaces (root).
public var isRoot: Bool { geteuid() == 0 }

/// A network namespace made for one test, with a unique name, deleted (with every link in it) by
/// `destroy()`. Names carry the pid and a counter so parallel tests and runs never collide.
public final class TestNamespace: @unchecked Sendable {
    private static let counter = Mutex(0)

    public let name: String

    /// Creates `rch<pid>-<n><tag>` (`TestResources.prefix`); loopback is brought up. The first
    /// namespace of a test process sweeps up what dead test processes left (`TestResources`).
    public init(tag: String = "") throws {
        TestResources.sweepOnce()
        let n: Int = Self.counter.withLock { $0 += 1; return $0 }
        name = "\(TestResources.prefix)\(n)\(tag)"
        try sh("ip netns add \(name)")
        try sh("ip -n \(name) link set lo up")
    }

    /// Starts `/usr/bin/python3 -c script` inside the namespace (`ip netns exec`), its output
    /// discarded: the small helpers that hold a tun or listen for tests. Killed when the value
    /// goes; the caller may stop it before (`killAndWait()`).
    public func startPython(_ script: String) throws -> Child {
        try Child(ipCommand, ["netns", "exec", name, "/usr/bin/python3", "-c", script], output: .discard, error: .discard)
    }

    /// Runs `ip -n NAME ARGS`.
    @discardableResult
    public func ip(_ args: String, check: Bool = true) throws -> String {
        try sh("ip -n \(name) \(args)", check: check).output
    }

    /// Runs a shell command inside the namespace (`ip netns exec`).
    @discardableResult
    public func exec(_ command: String, check: Bool = true) throws -> String {
        try sh("ip netns exec \(name) sh -c '\(command.replacingOccurrences(of: "'", with: "'\\''"))'", check: check).output
    }

    /// Starts a TCP listener on `port` (all addresses, IPv4 and IPv6) that accepts nothing for two
    /// minutes, and waits until it listens. It runs in the background, holding none of the
    /// descriptors it inherited, until `destroy()` kills what runs in the namespace.
    public func listenTCP(port: Int) throws {
        try exec("nohup python3 -c \"import os,socket,time; os.closerange(3, 65536); s=socket.socket(socket.AF_INET6); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); s.bind(('::', \(port))); s.listen(16); time.sleep(120)\" >/dev/null 2>&1 &")
        guard waitUntil(timeout: 10, { ((try? exec("ss -Hltn sport = :\(port)")) ?? "").contains(":\(port)") }) else {
            throw ShellError(command: "listener on port \(port) in \(name)", status: 1, output: "did not start")
        }
    }

    /// Deletes the namespace; the links inside it go with it.
    public func destroy() {
        _ = try? sh("ip netns pids \(name) | xargs -r kill -9", check: false)
        _ = try? sh("ip netns del \(name)", check: false)
    }

    deinit { destroy() }
}

/// Two namespaces joined by a veth pair: `host` (the machine under test, link `inner`) and
/// `uplink` (its network, link `outer`), with 10.X.0.2/24 and 10.X.0.1/24 where X is `subnet`.
/// Traffic between them never leaves the machine.
public final class VethUplink: @unchecked Sendable {
    public let host: TestNamespace
    public let uplink: TestNamespace
    public let inner: String
    public let outer: String
    public let subnet: Int

    public var hostAddress: String { "10.\(subnet).0.2" }
    public var gatewayAddress: String { "10.\(subnet).0.1" }

    /// Creates the pair; `host` gets the address and, with `defaultRoute`, a default route via the uplink.
    public init(host: TestNamespace, uplink: TestNamespace, inner: String = "eth0", outer: String = "up0",
                subnet: Int = 77, metric: Int = 100, defaultRoute: Bool = true) throws {
        self.host = host; self.uplink = uplink; self.inner = inner; self.outer = outer; self.subnet = subnet
        try host.ip("link add \(inner) type veth peer name \(outer) netns \(uplink.name)")
        try uplink.ip("addr add 10.\(subnet).0.1/24 dev \(outer)")
        try uplink.ip("link set \(outer) up")
        try host.ip("addr add 10.\(subnet).0.2/24 dev \(inner)")
        try host.ip("link set \(inner) up")
        if defaultRoute { try host.ip("route add default via 10.\(subnet).0.1 dev \(inner) metric \(metric)") }
    }

    /// The host side's IPv6 link-local address in CIDR form, once it has passed duplicate
    /// address detection (a second or two after the link came up; until then a status does not
    /// list it, and its arrival is an event). Nil when the host side has no IPv6, or when
    /// `timeout` passes first.
    public func settledLinkLocal(timeout: TimeInterval = 10) throws -> String? {
        let disabled = try host.exec("cat /proc/sys/net/ipv6/conf/\(inner)/disable_ipv6", check: false)
        guard disabled.trimmingCharacters(in: .whitespacesAndNewlines) == "0" else { return nil }
        var found: String?
        _ = try waitUntil(timeout: timeout) {
            let lines = try host.ip("-6 addr show dev \(inner) scope link", check: false).split(separator: "\n")
            guard let line = lines.first(where: { $0.contains("inet6 fe80") }), !line.contains("tentative") else { return false }
            found = line.split(separator: " ").drop { $0 != "inet6" }.dropFirst().first.map(String.init)
            return found != nil
        }
        return found
    }

    /// Peer down: the host side loses carrier (the kernel sends no route event for it).
    public func dropCarrier() throws { try uplink.ip("link set \(outer) down") }
    public func restoreCarrier() throws { try uplink.ip("link set \(outer) up") }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
public func waitUntil(timeout: TimeInterval = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}
