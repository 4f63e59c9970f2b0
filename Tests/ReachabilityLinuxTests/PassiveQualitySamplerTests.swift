import Foundation
import ReachabilityCore
import Testing
import TestSupport
@testable import ReachabilityLinux

extension SystemTests {
/// The sock_diag dump against real sockets: a client namespace whose uplink (a veth) leads to a
/// server namespace, the server at an address beyond the client's own prefix (routed via the
/// gateway), and a loopback connection beside it.
@Suite struct PassiveQualitySamplerTests {
    /// Runs `script` detached inside `namespace` (its output discarded, its inherited
    /// descriptors closed, as `listenTCP` does: a child holding `sh()`'s pipe blocks the caller);
    /// the namespace's destruction ends it, and the test's end removes the script.
    static func startDetached(_ namespace: TestNamespace, _ script: String) throws -> String {
        let file = "/tmp/\(namespace.name)-sockdiag.py"
        try ("import os; os.closerange(3, 65536)\n" + script).write(toFile: file, atomically: true, encoding: .utf8)
        try namespace.exec("nohup python3 \(file) >/dev/null 2>&1 </dev/null &")
        return file
    }

    /// Listens on `address`:`port`; answers each byte received with 256 KiB.
    static func serverScript(address: String, port: Int) -> String {
        """
        import socket, threading, os
        os.closerange(3, 65536)
        l = socket.socket(socket.AF_INET6 if ':' in '\(address)' else socket.AF_INET)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(('\(address)', \(port))); l.listen(8)
        def serve(c):
            while c.recv(1):
                c.sendall(b'x' * 262144)
        while True:
            c, _ = l.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """
    }

    /// Connects to each address, asks for one answer on each connection, prints `moved`, then
    /// keeps the connections open and idle.
    static func clientScript(_ targets: [(String, Int)], from source: String = "") -> String {
        let list = targets.map { "('\($0.0)', \($0.1))" }.joined(separator: ", ")
        return """
        import socket, sys, time
        conns = [socket.create_connection(t, timeout=10, source_address=('\(source)', 0)) for t in [\(list)]]
        for c in conns:
            c.sendall(b'?')
            got = 0
            while got < 262144:
                got += len(c.recv(65536))
        print('moved', flush=True)
        time.sleep(120)
        """
    }

    @Test(.needsRoot()) func aConnectionThatMovedDataIsASampleOnItsUplink() throws {
        let client = try TestNamespace(tag: "c")
        let network = try TestNamespace(tag: "s")
        defer { client.destroy(); network.destroy() }
        let veth = try VethUplink(host: client, uplink: network, inner: "eth0", outer: "up0", subnet: 93)
        try network.ip("addr add 198.51.100.1/32 dev lo")
        let eth0 = try #require(Int(client.exec("cat /sys/class/net/eth0/ifindex").trimmingCharacters(in: .whitespacesAndNewlines)))
        let scripts = [try Self.startDetached(network, Self.serverScript(address: "198.51.100.1", port: 8093)),
                       try Self.startDetached(client, Self.serverScript(address: "127.0.0.1", port: 8094))]
        defer { scripts.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        #expect(waitUntil(timeout: 10) { ((try? network.exec("ss -Hltn sport = :8093")) ?? "").contains("8093") })
        #expect(waitUntil(timeout: 10) { ((try? client.exec("ss -Hltn sport = :8094")) ?? "").contains("8094") })

        let sampler = PassiveQualitySampler(networkNamespace: client.name)
        let first = try #require(sampler.sampleNow())
        #expect(first.interval == nil && first.samples.isEmpty, "the first dump learns the counters")

        let traffic = try Child("/usr/sbin/ip", ["netns", "exec", client.name, "/usr/bin/python3", "-c",
                                                 Self.clientScript([("198.51.100.1", 8093), ("127.0.0.1", 8094)])])
        defer { traffic.signal(SIGKILL); _ = traffic.wait() }
        #expect(waitUntil(timeout: 20) { traffic.lines.contains("moved") }, "client: \(traffic.stderr)")

        let moved = try #require(sampler.sampleNow())
        #expect(moved.interval.map { $0 > 0 } == true)
        #expect(moved.samples.keys.sorted() == [eth0], "only the routed connection, on eth0 (\(veth.inner)); loopback gives none: \(moved.samples)")
        let sample = try #require(moved.samples[eth0]?.first)
        #expect(moved.samples[eth0]?.count == 1)
        #expect(sample.source == .passive)
        #expect(sample.rttMs > 0)
        #expect((sample.bytesReceived ?? 0) >= 262_144)
        #expect((sample.segmentsSent ?? 0) > 0)
        let sizes = sampler.cacheSizes
        #expect(sizes.sockets == 3, "the routed client and both ends of the loopback connection: \(sizes)")
        #expect(sizes.routes == 1)

        let idle = try #require(sampler.sampleNow())
        #expect(idle.samples.isEmpty, "nothing moved since: \(idle.samples)")
    }

    @Test(.needsRoot()) func theHandlerGetsTimedDumpsAndRouteChangesAreLookedUpAgain() throws {
        let client = try TestNamespace(tag: "c")
        let network = try TestNamespace(tag: "s")
        let network2 = try TestNamespace(tag: "t")
        defer { client.destroy(); network.destroy(); network2.destroy() }
        _ = try VethUplink(host: client, uplink: network, inner: "eth0", outer: "up0", subnet: 95)
        _ = try VethUplink(host: client, uplink: network2, inner: "eth1", outer: "up1", subnet: 96, defaultRoute: false)
        try network.ip("addr add 198.51.100.1/32 dev lo")
        try network2.ip("addr add 198.51.100.1/32 dev lo")
        let index = { (name: String) in Int((try? client.exec("cat /sys/class/net/\(name)/ifindex"))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") }
        let eth0 = try #require(index("eth0")), eth1 = try #require(index("eth1"))
        let scripts = [try Self.startDetached(network, Self.serverScript(address: "198.51.100.1", port: 8095)),
                       try Self.startDetached(network2, Self.serverScript(address: "198.51.100.1", port: 8095))]
        defer { scripts.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        #expect(waitUntil(timeout: 10) { ((try? network.exec("ss -Hltn sport = :8095")) ?? "").contains("8095") })
        #expect(waitUntil(timeout: 10) { ((try? network2.exec("ss -Hltn sport = :8095")) ?? "").contains("8095") })

        let dumps = Recorder<QualityDump>()
        let sampler = PassiveQualitySampler(networkNamespace: client.name) { dumps.append($0) }
        sampler.start(interval: 0.2)
        defer { sampler.stop() }
        #expect(waitUntil(timeout: 10) { dumps.count >= 2 })
        #expect(dumps.all.first?.interval == nil)

        let first = try Child("/usr/sbin/ip", ["netns", "exec", client.name, "/usr/bin/python3", "-c",
                                               Self.clientScript([("198.51.100.1", 8095)], from: "10.95.0.2")])
        defer { first.signal(SIGKILL); _ = first.wait() }
        #expect(waitUntil(timeout: 20) { first.lines.contains("moved") })
        #expect(waitUntil(timeout: 10) { dumps.all.contains { $0.samples[eth0] != nil } })

        // The more specific route now leads out of eth1: after routesChanged() the next
        // connection there, from the same source address (so the same cache key), is eth1's.
        try client.ip("route add 198.51.100.0/24 via 10.96.0.1 dev eth1")
        try network2.ip("route add 10.95.0.2/32 dev up1")
        sampler.routesChanged()
        let second = try Child("/usr/sbin/ip", ["netns", "exec", client.name, "/usr/bin/python3", "-c",
                                                Self.clientScript([("198.51.100.1", 8095)], from: "10.95.0.2")])
        defer { second.signal(SIGKILL); _ = second.wait() }
        #expect(waitUntil(timeout: 20) { second.lines.contains("moved") }, "client: \(second.stderr)")
        #expect(waitUntil(timeout: 10) { dumps.all.contains { $0.samples[eth1] != nil } })
    }

    /// More sockets than the limit: every one is listed, at most the limit read; from the
    /// second dump on the crowd is thinned to the budget, the same sockets each time.
    @Test(.needsRoot()) func aDumpReadsAtMostItsLimit() throws {
        let namespace = try TestNamespace(tag: "m")
        defer { namespace.destroy() }
        let holder = try Child("/usr/sbin/ip", ["netns", "exec", namespace.name, "/usr/bin/python3", "-c", """
            import socket, time
            l = socket.socket(); l.bind(('127.0.0.1', 8097)); l.listen(64)
            conns = [socket.create_connection(('127.0.0.1', 8097)) for _ in range(40)]
            accepted = [l.accept()[0] for _ in range(40)]
            print('held', flush=True)
            time.sleep(120)
            """])
        defer { holder.signal(SIGKILL); _ = holder.wait() }
        #expect(waitUntil(timeout: 20) { holder.lines.contains("held") }, "\(holder.stderr)")

        let sampler = PassiveQualitySampler(networkNamespace: namespace.name, socketLimit: 16)
        #expect(sampler.sampleNow() != nil)
        #expect(sampler.lastDumpSockets == (listed: 80, read: 16), "\(sampler.lastDumpSockets)")
        #expect(sampler.cacheSizes.sockets == 16)
        #expect(sampler.sampleNow() != nil)
        let thinned = sampler.lastDumpSockets
        #expect(thinned.listed == 80 && thinned.read > 0 && thinned.read <= 16, "\(thinned)")
        #expect(sampler.sampleNow() != nil)
        #expect(sampler.lastDumpSockets == thinned, "the same share each dump")
    }

    @Test func aFailingSocketIsLoggedOnceAndTheSamplerGoesOn() throws {
        let lines = Recorder<String>()
        let log = LogSink(threshold: .debug) { _, message in lines.append(message) }
        let sampler = PassiveQualitySampler(networkNamespace: "/nonexistent-netns-\(getpid())", log: log)
        #expect(sampler.sampleNow() == nil)
        #expect(sampler.sampleNow() == nil)
        #expect(lines.count == 1)
        #expect(lines.all.first?.contains("/nonexistent-netns-") == true, "\(lines.all)")
    }
}
}
