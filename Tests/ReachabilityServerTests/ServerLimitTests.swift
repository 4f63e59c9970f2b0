import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import ReachabilitySystem
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Check handlers that never answer on their own, counting cancellations.
private final class HeldChecks: @unchecked Sendable {
    let started = Mutex(0)
    let cancelled = Mutex(0)
    let completions = Mutex<[ReachabilityServer.Completion]>([])

    var handler: ReachabilityServer.CheckHandler {
        { [self] _, _, completion in
            started.withLock { $0 += 1 }
            completions.withLock { $0.append(completion) }
            return { [self] in cancelled.withLock { $0 += 1 } }
        }
    }

    func answerAll() {
        for completion in completions.withLock({ list in defer { list = [] }; return list }) {
            completion(.parameters(Data(#"{"result":{}}"#.utf8)))
        }
    }
}

private func checkCall() -> VarlinkCall {
    VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("example.com")])
}

/// The limits against abusive clients (`[Limits]`), against a real server on a real socket.
@Suite(.serialized) struct ServerLimitTests {
    @Test func checksInFlightPerUserAndInAllGetBusy() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxChecksPerUser = 2
        configuration.limits.maxChecksInFlight = 3
        let h = try ServerHarness(configuration: configuration)
        let held = HeldChecks()
        h.server.checkHandler = held.handler

        // One user (this process): two in flight, the third is Busy, and GetInfo still answers.
        let a = try h.connect(), b = try h.connect(), c = try h.connect()
        try a.send(checkCall()); try b.send(checkCall())
        #expect(waitUntilTrue { held.started.withLock { $0 } == 2 })
        #expect(throws: ReachabilityClientError.remote(.busy(retryAfterMs: 1000))) { try c.call(checkCall()) }
        #expect(try c.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] == .string("reachd"))
        #expect(h.server.rejectionCounts[.checksBusyForUser] == 1)

        // A caller that hangs up cancels its own check and frees its slot.
        a.close()
        #expect(waitUntilTrue { held.cancelled.withLock { $0 } == 1 && h.server.checksInFlightCount == 1 })
        try c.send(checkCall())
        #expect(waitUntilTrue { held.started.withLock { $0 } == 3 })

        // Answered checks free their slots too.
        held.answerAll()
        #expect(try b.receive().parameters["result"] == .object([:]))
        #expect(try c.receive().parameters["result"] == .object([:]))
        #expect(waitUntilTrue { h.server.checksInFlightCount == 0 })
        #expect(held.cancelled.withLock { $0 } == 1)
    }

    @Test(.enabled(if: getuid() == 0, "needs root: a second uid (setpriv)"))
    func checksInFlightInAllAcrossUsers() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxChecksPerUser = 2
        configuration.limits.maxChecksInFlight = 2
        let h = try ServerHarness(configuration: configuration)
        let held = HeldChecks()
        h.server.checkHandler = held.handler
        let a = try h.connect(), b = try h.connect()
        try a.send(checkCall()); try b.send(checkCall())
        #expect(waitUntilTrue { held.started.withLock { $0 } == 2 })
        // Another user is refused as well: the total is reached.
        chmod(h.directory, 0o755)
        let other = try runAsNobody(["python3", "-c", """
            import socket, json, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            s.sendall(json.dumps({"method": "io.reachd.Reachability.Check", "parameters": {"host": "example.com"}}).encode() + b"\\0")
            print(s.recv(65536).rstrip(b"\\0").decode())
            """, h.path])
        #expect(other.contains(#""error":"io.reachd.Reachability.Busy""#), "\(other)")
        #expect(h.server.rejectionCounts[.checksBusy] == 1)
        held.answerAll()
    }

    /// A client that keeps hitting a limit gets its answer every time, but the log hears of it
    /// a few times a second at most.
    @Test func warningsAreRateLimitedPerConnection() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxChecksPerUser = 1
        let h = try ServerHarness(configuration: configuration)
        let lines = Mutex<[String]>([])
        h.server.logSink = LogSink(threshold: .warning) { level, message in if level == .warning { lines.withLock { $0.append(message) } } }
        let held = HeldChecks()
        h.server.checkHandler = held.handler
        let holder = try h.connect()
        try holder.send(checkCall())
        #expect(waitUntilTrue { held.started.withLock { $0 } == 1 })
        let spammer = try h.connect()
        for _ in 0..<200 {
            #expect(throws: ReachabilityClientError.remote(.busy(retryAfterMs: 1000))) { try spammer.call(checkCall()) }
        }
        #expect(h.server.rejectionCounts[.checksBusyForUser] == 200)
        let logged = lines.withLock { $0 }
        #expect(logged.count >= 1 && logged.count <= 10, "\(logged.count) lines")
        held.answerAll()
    }

    @Test func connectionsPerUserAreBounded() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxConnectionsPerUser = 3
        let h = try ServerHarness(configuration: configuration)
        let kept = try (0..<3).map { _ in try h.connect() }
        for c in kept { #expect(try c.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] != nil) }
        let refused = try h.connect()
        #expect(throws: (any Error).self) { try refused.call(VarlinkCall(method: "org.varlink.service.GetInfo")) }
        #expect(h.server.rejectionCounts[.tooManyConnectionsForUser] == 1)
        kept[0].close()
        #expect(waitUntilTrue { h.server.connectionCount == 2 })
        let again = try h.connect()
        #expect(try again.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] != nil)
    }

    @Test func connectionsInAllAreBounded() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxConnections = 2
        let h = try ServerHarness(configuration: configuration)
        let kept = try (0..<2).map { _ in try h.connect() }
        for c in kept { _ = try c.call(VarlinkCall(method: "org.varlink.service.GetInfo")) }
        let refused = try h.connect()
        #expect(throws: (any Error).self) { try refused.call(VarlinkCall(method: "org.varlink.service.GetInfo")) }
        #expect(h.server.rejectionCounts[.tooManyConnections] == 1)
    }

    @Test func anIncompleteMessageTimesOut() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.partialMessageTimeoutSeconds = 0.3
        let h = try ServerHarness(configuration: configuration)
        let slow = try RawClient(path: h.path)
        try slow.write(Array(#"{"method":"org.varlink.service.GetInfo""#.utf8))
        let healthy = try h.connect()
        #expect(waitUntilTrue { slow.isClosedByPeer() })
        #expect(h.server.rejectionCounts[.staleMessage] == 1)
        // A complete message is never stale, however long the connection stays open.
        #expect(try healthy.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] != nil)
    }

    @Test func incomingBytesOverAllConnectionsAreBounded() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.maxIncomingBytes = 200_000
        let h = try ServerHarness(configuration: configuration)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 60_000)
        let holders = try (0..<5).map { _ in try RawClient(path: h.path) }
        for holder in holders { try holder.write(chunk) }
        // 5 × 60 000 bytes do not fit in 200 000: the server closes holders until they do.
        #expect(waitUntilTrue { holders.filter { $0.isClosedByPeer() }.count >= 2 })
        #expect(h.server.rejectionCounts[.incomingBytes, default: 0] >= 2)
        let healthy = try h.connect()
        #expect(try healthy.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] != nil)
    }

    @Test func queuedBytesOverAllConnectionsAreBounded() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.limits.maxQueuedBytes = 1 << 20
        // Each connection alone may queue more than all of them together.
        configuration.queueLimits = OutgoingQueue.Limits(maxMessages: 100_000, maxBytes: 64 << 20)
        let h = try ServerHarness(configuration: configuration)
        // Clients that send calls and never read: their replies pile up until the total is
        // reached, then the one with the most queued is closed.
        var call = try VarlinkCodec.encode(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription",
                                                       parameters: ["interface": .string("io.reachd.Reachability")]))
        call.append(0)
        let batch = Array(repeating: Array(call), count: 60).flatMap { $0 }
        let hogs = try (0..<8).map { _ -> RawClient in
            let c = try RawClient(path: h.path, receiveBuffer: 4096)
            return c
        }
        for _ in 0..<20 { for hog in hogs where !hog.isClosedByPeer() { try? hog.write(batch) } }
        #expect(waitUntilTrue { h.server.rejectionCounts[.queuedBytes, default: 0] >= 1 }, "\(h.server.rejectionCounts)")
        #expect(h.server.rejectionCounts[.notReading] == nil)
        let subscriber = try h.connect()
        try subscriber.send(VarlinkCall(method: "io.reachd.Reachability.Subscribe", more: true))
        #expect(try subscriber.receive().parameters["event"] != nil)
        h.publishChange()
        #expect(try subscriber.receive().parameters["event"] != nil)
    }
}

/// A client speaking raw bytes, for messages a proper client would never send.
final class RawClient: @unchecked Sendable {
    let fd: Int32

    init(path: String, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(4)) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { let error = Errno.current("connect", path: path); close(fd); throw error }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Errno.current("send") }
            offset += n
        }
    }

    /// The server closed its end (EOF or reset), reading and discarding whatever came before.
    func isClosedByPeer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET || errno == EPIPE }
        }
    }

    deinit { close(fd) }
}

/// Runs a command as `nobody` (root only) and returns its stdout.
func runAsNobody(_ arguments: [String]) throws -> String {
    let child = try Subprocess("/usr/bin/setpriv", arguments: ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/env"] + arguments,
                               environment: environmentList(childEnvironment()))
    _ = child.wait()
    return child.text(.output)
}
