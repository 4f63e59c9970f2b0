import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Gives `ip netns exec NAME` (which runs reachd) a hosts file and a resolv.conf of its own:
/// iproute2 bind-mounts `/etc/netns/NAME/*` over `/etc/*` for the commands it runs. The
/// nameserver is loopback inside the namespace, so an unknown name fails without any packet
/// leaving it.
final class NamespaceEtc: @unchecked Sendable {
    let directory: String

    init(namespace: TestNamespace, hosts: String) throws {
        directory = "/etc/netns/\(namespace.name)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try hosts.write(toFile: directory + "/hosts", atomically: true, encoding: .utf8)
        try "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".write(toFile: directory + "/resolv.conf", atomically: true, encoding: .utf8)
    }

    func remove() { _ = try? FileManager.default.removeItem(atPath: directory) }
}

extension ConnectivitySystemTests {
/// `reachctl check` against reachd running in a namespace with a veth uplink.
@Suite struct CheckCommandTests {
    @Test(.needsRoot()) func checkAnswersThroughTheDaemon() async throws {
        let host = try TestNamespace(tag: "k"), uplink = try TestNamespace(tag: "ku")
        defer { host.destroy(); uplink.destroy() }
        let etc = try NamespaceEtc(namespace: host, hosts: """
            127.0.0.1 localhost
            192.0.2.1 far.test
            198.51.100.7 hole.test
            10.81.0.1 gw.test
            """)
        defer { etc.remove() }
        _ = try VethUplink(host: host, uplink: uplink, subnet: 81)
        try host.ip("route add blackhole 198.51.100.0/24")
        try uplink.ip("addr add 192.0.2.1/32 dev lo")
        try uplink.listenTCP(port: 8765)
        let daemon = try DaemonUnderTest(namespace: host)
        #expect(waitUntil(timeout: 10) { (try? daemon.reachctl(["status"]).stdout.hasPrefix("online")) == true })

        let far = try daemon.reachctl(["check", "far.test"])
        #expect(far.status == 0, "\(far.stderr)")
        #expect(far.stdout == "far.test (192.0.2.1): reachable via eth0 gateway 10.81.0.1 src 10.81.0.2 [reachable]")

        let json = try daemon.reachctl(["check", "far.test", "--json"])
        let answer = try WireJSON.decoder().decode(HostCheck.self, from: Data(json.stdout.utf8))
        #expect(answer.status == "ethernet" && answer.reachable && answer.routes.first?.kind == "ethernet")
        #expect(json.stdout.contains(#""tcp":null"#))

        let direct = try daemon.reachctl(["check", "gw.test"])
        #expect(direct.status == 0 && direct.stdout == "gw.test (10.81.0.1): reachable via eth0 src 10.81.0.2 [reachable, isDirect]")

        let local = try daemon.reachctl(["check", "10.81.0.2"])
        #expect(local.status == 0 && local.stdout.contains("isLocalAddress"))

        let hole = try daemon.reachctl(["check", "hole.test"])
        #expect(hole.status == 1 && hole.stdout == "hole.test (198.51.100.7): not reachable: blackhole route")

        // reachctl connects itself, from its own namespace (reachd never connects for a caller):
        // run it in the daemon's namespace. A refusal means the host answered: reachable, port closed.
        func reachctlInside(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(ipCommand, ["netns", "exec", host.name, Binaries.reachctl] + arguments + ["--socket", daemon.socketPath])
        }
        let open = try reachctlInside(["check", "far.test", "--port", "8765"])
        #expect(open.status == 0 && open.stdout.contains("· tcp/8765 connected in "), "\(open.stdout)")
        let closed = try reachctlInside(["check", "gw.test", "--port", "8766"])
        #expect(closed.status == 0 && closed.stdout.hasSuffix("[reachable, isDirect] · tcp/8766 closed (connection refused)"), "\(closed.stdout)")
        let holePort = try reachctlInside(["check", "hole.test", "--port", "8765"])
        #expect(holePort.status == 1 && holePort.stdout.hasSuffix("· tcp/8765 failed: not attempted: no usable route"), "\(holePort.stdout)")

        let missing = try daemon.reachctl(["check", "nowhere.test"])
        #expect(missing.status == 1 && missing.stderr == "reachctl: nowhere.test: host not found\n", "\(missing.stderr)")

        for bad in ["", "exa mple.com", String(repeating: "a.", count: 127) + "ab"] {
            let result = try daemon.reachctl(["check", bad])
            #expect(result.status == 2, "\(bad.prefix(20)): \(result.stderr)")
        }

        // The varlink errors themselves, past reachctl's own validation.
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        for bad in ["", "a;b", String(repeating: "a", count: 64) + ".test"] {
            do {
                _ = try await client.check(host: bad)
                Issue.record("\(bad) was answered")
            } catch {
                #expect(error as? ReachabilityClientError == .remote(.invalidParameter("host")))
            }
        }
        do {
            _ = try await client.check(host: "nowhere.test")
            Issue.record("nowhere.test was answered")
        } catch {
            #expect(error as? ReachabilityClientError == .remote(.hostNotFound("nowhere.test")))
        }
        // The client library connects from this (the test's) process: to a listener on this
        // namespace's loopback, which the daemon's namespace routes locally as well.
        let listener = try LoopbackListener()
        let viaClient = try await client.check(host: "127.0.0.1", port: listener.port)
        #expect(viaClient.reachable && viaClient.tcp?.connected == true && listener.accepted() >= 1, "\(String(describing: viaClient.tcp))")
        listener.close()
        let refused = try await client.check(host: "127.0.0.1", port: listener.port)
        #expect(refused.reachable && refused.tcp?.portClosed == true, "\(String(describing: refused.tcp))")

        // An independent client (PyPI varlink) checks each reply against the served description.
        let script = Binaries.packageRoot + "/Tests/python/varlink_check.py"
        for arguments in [["far.test"], ["far.test", "8765"], ["hole.test", "8765"], ["10.81.0.2"], ["gw.test", "8766"]] {
            let python = try run(Binaries.python, [script, daemon.socketPath] + arguments)
            let line = try JSONSerialization.jsonObject(with: Data(python.stdout.utf8)) as? [String: Any]
            #expect(line?["valid"] as? Bool == true, "\(arguments): \(python.stdout) \(python.stderr)")
        }
        let invalid = try run(Binaries.python, [script, daemon.socketPath, "a;b"])
        #expect(invalid.stdout.contains(#""error": "org.varlink.service.InvalidParameter""#) && invalid.stdout.contains(#""parameter": "host""#),
                "\(invalid.stdout) \(invalid.stderr)")
        let notFound = try run(Binaries.python, [script, daemon.socketPath, "nowhere.test"])
        #expect(notFound.stdout.contains(#""error": "io.reachd.Reachability.HostNotFound""#) && notFound.stdout.contains(#""host": "nowhere.test""#),
                "\(notFound.stdout) \(notFound.stderr)")
    }

    @Test(.needsRoot()) func watchPrintsEachChangeOfTheAnswer() throws {
        let host = try TestNamespace(tag: "x"), uplink = try TestNamespace(tag: "xu")
        defer { host.destroy(); uplink.destroy() }
        let etc = try NamespaceEtc(namespace: host, hosts: "192.0.2.1 far.test\n")
        defer { etc.remove() }
        let veth = try VethUplink(host: host, uplink: uplink, subnet: 83)
        let daemon = try DaemonUnderTest(namespace: host)
        #expect(waitUntil(timeout: 10) { (try? daemon.reachctl(["status"]).stdout.hasPrefix("online")) == true })

        let watch = try Child(Binaries.reachctl, ["check", "far.test", "--watch", "--socket", daemon.socketPath])
        #expect(waitUntil(timeout: 10) { watch.lines.count == 1 })
        #expect(watch.lines.first?.hasSuffix("far.test (192.0.2.1): reachable via eth0 gateway 10.83.0.1 src 10.83.0.2 [reachable]") == true,
                "\(watch.lines)")

        try veth.dropCarrier()
        #expect(waitUntil(timeout: 10) { watch.lines.count == 2 }, "\(watch.lines)")
        #expect(watch.lines.last?.hasSuffix("far.test (192.0.2.1): not reachable via eth0 gateway 10.83.0.1 src 10.83.0.2") == true,
                "\(watch.lines)")

        try veth.restoreCarrier()
        #expect(waitUntil(timeout: 10) { watch.lines.count == 3 }, "\(watch.lines)")
        #expect(watch.lines.last?.hasSuffix("[reachable]") == true, "\(watch.lines)")

        // Events that change nothing about this host print nothing: a second link comes up.
        let other = try TestNamespace(tag: "xv")
        defer { other.destroy() }
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        _ = try VethUplink(host: host, uplink: other, inner: "eth1", outer: "up1", subnet: 84, defaultRoute: false)
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains(#""interface":"eth1""#) } }, "no event for eth1")
        // A marker change that does change the answer: its line is the very next one, so nothing
        // was printed for eth1's events in between.
        try veth.dropCarrier()
        #expect(waitUntil(timeout: 10) { watch.lines.dropFirst(3).contains { $0.contains("not reachable") } }, "\(watch.lines)")
        #expect(watch.lines.count == 4, "\(watch.lines)")
        #expect(watch.lines.last?.hasSuffix("far.test (192.0.2.1): not reachable via eth0 gateway 10.83.0.1 src 10.83.0.2") == true,
                "\(watch.lines)")
        monitor.signal(SIGINT)
        monitor.wait()

        watch.signal(SIGINT)
        #expect(watch.wait() == 0)
    }
}
}

/// A TCP listener on 127.0.0.1 of the test's own namespace, on a port the kernel picks.
final class LoopbackListener: @unchecked Sendable {
    private var fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0 else { throw Errno.current(fd < 0 ? "socket" : bound != 0 ? "bind" : "listen") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts what is waiting; how many connections that was.
    func accepted() -> Int {
        var count = 0
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return count }
            Glibc.close(client)
            count += 1
        }
    }

    func close() { if fd >= 0 { Glibc.close(fd); fd = -1 } }
    deinit { close() }
}
