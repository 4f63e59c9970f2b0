import Foundation
import ReachabilityCore
import Testing
import TestSupport

/// Whose sockets count, end to end on a real kernel: reachd's dumps see every user's TCP
/// sockets, and another user's crowd must not decide the class (see `QualityClassSystemTests`).
@Suite(.serialized, .dedicatedThreads) struct QualityVoteSystemTests {}

extension QualityVoteSystemTests {
    /// Echoes what each connection sends (threads: a hundred connections at most).
    static func echoServer(_ address: String, _ port: Int) -> String { """
        import socket, threading
        l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(('\(address)', \(port))); l.listen(256)
        def serve(c):
            while True:
                data = c.recv(4096)
                if not data: return
                c.sendall(data)
        while True:
            c, _ = l.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """
    }

    /// Reads and drops what each connection sends.
    static func sinkServer(_ address: String, _ port: Int) -> String { """
        import socket, threading
        l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind(('\(address)', \(port))); l.listen(8)
        def serve(c):
            while c.recv(65536): pass
        while True:
            c, _ = l.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """
    }

    /// As `nobody` (setuid in the child): 100 connections to the slow host, each sending a byte
    /// every half second and reading its echo, and one connection sending 64 KiB a second to
    /// the lossy host. Prints `ready` once all are connected.
    static let hostileUser = """
        import os, select, socket, sys, time
        os.setgroups([]); os.setgid(65534); os.setuid(65534)
        slow, lossy = (sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))
        def start(address):
            s = socket.socket(); s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # every byte out at once: moving in every dump
            s.connect_ex(address); return s
        crowd = [start(slow) for _ in range(100)]
        bulk = start(lossy)
        pending, deadline = set(crowd + [bulk]), time.time() + 20
        while pending and time.time() < deadline:
            _, writable, _ = select.select([], list(pending), [], 1)
            for s in writable:
                error = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error: sys.exit('connect: %s' % os.strerror(error))
                pending.discard(s)
        if pending: sys.exit('%d connections still pending' % len(pending))
        print('ready uid %d' % os.getuid(), flush=True)
        chunk = b'x' * 8192
        while True:
            for s in crowd:
                try: s.send(b'?')
                except BlockingIOError: pass
            for _ in range(4):
                try: bulk.send(chunk)
                except BlockingIOError: pass
            end = time.time() + 0.5
            while time.time() < end:
                readable, _, _ = select.select(crowd, [], [], max(0, end - time.time()))
                for s in readable:
                    try: s.recv(4096)
                    except BlockingIOError: pass
        """

    /// The kernel's smoothed RTTs (ms) and total retransmissions of the established sockets to
    /// `address` in `namespace`, with their owners, as `ss -tie` tells them (one line each).
    static func sockets(to address: String, in namespace: TestNamespace) throws -> [(uid: Int, rttMs: Double, retransmits: Int)] {
        let output = try namespace.exec("ss -HOtine state established dst \(address)", check: false)
        return output.split(separator: "\n").compactMap { line in
            guard let uid = line.firstMatch(of: /\buid:(\d+)/).flatMap({ Int($0.1) }),
                  let rtt = line.firstMatch(of: /\brtt:([0-9.]+)\//).flatMap({ Double($0.1) }) else { return nil }
            let retransmits = line.firstMatch(of: /\bretrans:\d+\/(\d+)/).flatMap { Int($0.1) } ?? 0
            return (uid, rtt, retransmits)
        }
    }

    /// Beside an app whose requests cross a 50 ms uplink, `nobody` keeps 100 connections busy
    /// to a host 2 s away and one sending 64 KiB a second over a path losing 20 % of packets,
    /// all through the same uplink. Counted socket by socket, the crowd made the class minimal
    /// in 20 s and the loss alone in 40 s; one vote per user keeps it good throughout.
    ///
    /// ```
    ///  reachd's namespace ── line 50 ms (dl0) ── network ─┬─ line 1.95 s ── slow host
    ///  app (root), nobody                       app's    └─ line 20 % loss ── lossy host
    ///                                           server
    /// ```
    @Test(.needsRoot())
    func anotherUsersSlowCrowdAndLossyPathDoNotOutvoteTheApp() throws {
        let uplink = try MeasuredUplink(tag: "lv", rtt: 0.05, subnet: 81, config: MeasuredUplink.config(interval: "1s"))
        defer { uplink.destroy() }
        let network = uplink.network
        let slowNetwork = try TestNamespace(tag: "lvs"), lossyNetwork = try TestNamespace(tag: "lvl")
        defer { slowNetwork.destroy(); lossyNetwork.destroy() }
        try network.exec("sysctl -qw net.ipv4.ip_forward=1")
        let slowLine = try DelayLine(host: network, network: slowNetwork, settings: .init(rtt: 1.95), subnet: 82,
                                     hostDevice: "sl0", networkDevice: "sl1", defaultRoute: false)
        defer { slowLine.stop() }
        let lossyLine = try DelayLine(host: network, network: lossyNetwork, settings: .init(rtt: 0.005, loss: 0.2), seed: 7,
                                      subnet: 83, hostDevice: "ll0", networkDevice: "ll1", defaultRoute: false)
        defer { lossyLine.stop() }
        try slowNetwork.ip("route add default via \(slowLine.hostAddress)")
        try lossyNetwork.ip("route add default via \(lossyLine.hostAddress)")
        let servers = [try slowNetwork.startPython(Self.echoServer(slowLine.remoteAddress, 9101)),
                       try lossyNetwork.startPython(Self.sinkServer(lossyLine.remoteAddress, 9102))]
        defer { servers.forEach { $0.killAndWait() } }
        #expect(waitUntil(timeout: 10) { ((try? slowNetwork.exec("ss -Hltn sport = :9101")) ?? "").contains("9101") })
        #expect(waitUntil(timeout: 10) { ((try? lossyNetwork.exec("ss -Hltn sport = :9102")) ?? "").contains("9102") })

        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 20) { $0.source == .passive && $0.level == .good && $0.effectiveType == .fourG } != nil,
                "\(String(describing: uplink.quality())) \(uplink.daemon.child.stderr)")

        let hostile = try Child("/usr/sbin/ip", ["netns", "exec", uplink.host.name, "/usr/bin/python3", "-c", Self.hostileUser,
                                                 slowLine.remoteAddress, "9101", lossyLine.remoteAddress, "9102"])
        defer { hostile.signal(SIGKILL); _ = hostile.wait() }
        #expect(waitUntil(timeout: 20) { hostile.lines.contains("ready uid 65534") }, "\(hostile.stderr)")

        // 30 s of dumps every second: the class never moves.
        var worst: LinkQuality?
        let end = Date().addingTimeInterval(30)
        while Date() < end {
            if let quality = uplink.quality(), quality.level != .good || quality.effectiveType != .fourG { worst = worst ?? quality }
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(worst == nil, "the class moved: \(String(describing: worst))")
        let quality = try #require(uplink.quality())
        #expect(quality.source == .passive && !quality.stale && (quality.rttMs ?? .infinity) < 204, "\(quality)")

        // What would have outvoted the app, had each socket counted: 100 sockets of nobody at
        // 2 s, and a path that really lost.
        let crowd = try Self.sockets(to: slowLine.remoteAddress, in: uplink.host)
        #expect(crowd.count == 100 && crowd.allSatisfy { $0.uid == 65534 }, "\(crowd.count) sockets: \(crowd.prefix(3))")
        let rtts = crowd.map(\.rttMs).sorted()
        #expect((rtts.isEmpty ? 0 : rtts[rtts.count / 2]) >= 1500, "the crowd's median srtt: \(rtts)")
        let lossy = try Self.sockets(to: lossyLine.remoteAddress, in: uplink.host)
        #expect(lossy.count == 1 && lossy.first?.uid == 65534 && (lossy.first?.retransmits ?? 0) > 0, "\(lossy)")
        let lost = lossyLine.statistics
        #expect(lost.lostUp > 0 && Double(lost.lostUp) / Double(max(lost.lostUp + lost.forwardedUp, 1)) > 0.1, "\(lost)")
        #expect(hostile.isRunning, "\(hostile.stderr)")
    }
}
