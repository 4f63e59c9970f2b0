// CNetlink as well as Glibc: both bring <sys/socket.h>, and when the compiler reads this file in
// one batch with a netlink test that imports CNetlink, the socket constants belong to whichever
// module it loaded first. Importing both keeps SOCK_DGRAM and SOCK_STREAM in sight either way.
import CNetlink
import Foundation
import Testing
import ReachabilityCore
@testable import ReachabilityLinux
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A bound AF_UNIX socket of `type` at a fresh path under /tmp.
private final class UnixSocket: @unchecked Sendable {
    let fd: Int32
    let path: String

    /// `abstractName`: bound in the abstract namespace instead of at a path.
    init(type: Int32, listen: Bool = false, bind shouldBind: Bool = true, abstractName: String? = nil) throws {
        path = NSTemporaryDirectory() + "\(TestResources.prefix)sd-\(UUID().uuidString.prefix(8))"
        fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SystemdError(function: "socket", errno: errno) }
        guard shouldBind else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = abstractName.map { [0] + Array($0.utf8) } ?? Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let length = abstractName == nil ? MemoryLayout<sockaddr_un>.size : MemoryLayout<sa_family_t>.size + bytes.count
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(length)) }
        }
        guard rc == 0 else { throw SystemdError(function: "bind", errno: errno) }
        if listen { Glibc.listen(fd, 4) }
    }

    /// One datagram, or nil after `timeout` seconds.
    func receive(timeout: Int32 = 5) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeout * 1000) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

/// Each notifier gets its environment as a parameter: the process's own is never changed, so
/// these tests run in parallel with everything else.
@Suite struct SystemdNotifierTests {
    @Test func sendsReadyStatusReloadingStopping() throws {
        let listener = try UnixSocket(type: Int32(SOCK_DGRAM.rawValue))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path])
        #expect(notifier.isEnabled)

        #expect(notifier.ready(status: "wifi via wlan0, internet full"))
        #expect(listener.receive() == "READY=1\nSTATUS=wifi via wlan0, internet full")
        #expect(notifier.status("two\nlines"))
        #expect(listener.receive() == "STATUS=two lines")
        #expect(notifier.reloading())
        let reloading = listener.receive() ?? ""
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(UInt64(reloading.split(separator: "=").last ?? "") ?? 0 > 0)
        #expect(notifier.stopping())
        #expect(listener.receive() == "STOPPING=1")
    }

    /// `@name` is a socket in the abstract namespace, as systemd may pass it.
    @Test func sendsToAnAbstractSocket() throws {
        let name = "\(TestResources.prefix)sd-\(UUID().uuidString.prefix(8))"
        let listener = try UnixSocket(type: Int32(SOCK_DGRAM.rawValue), abstractName: name)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name])
        #expect(notifier.ready())
        #expect(listener.receive() == "READY=1")
    }

    @Test func doesNothingOutsideSystemd() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(!notifier.ready(status: "x"))
        #expect(notifier.startWatchdog() == nil)
        // A socket nobody listens on: not sent, and no crash.
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"]).ready())
    }

    @Test func pingsTheWatchdogAtHalfTheInterval() throws {
        let listener = try UnixSocket(type: Int32(SOCK_DGRAM.rawValue))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000",
                                                     "WATCHDOG_PID": "\(getpid())"])
        #expect(notifier.watchdogInterval == .milliseconds(200))
        // Started from its own queue (as a daemon whose state lives there would): no deadlock.
        let interval = notifier.queue.sync { notifier.startWatchdog() }
        #expect(interval == .milliseconds(200))
        #expect(listener.receive() == "WATCHDOG=1")
        #expect(listener.receive() == "WATCHDOG=1")
        #expect(listener.receive() == "WATCHDOG=1")
        // Stopped on its queue: a ping already in flight was sent before the block ran, so after
        // it nothing can come; a marker datagram is then the next (and only) thing received.
        notifier.queue.sync { notifier.stopWatchdog() }
        #expect(notifier.status("marker"))
        var received: [String] = []
        while let datagram = listener.receive(), datagram != "STATUS=marker" { received.append(datagram) }
        #expect(received.allSatisfy { $0 == "WATCHDOG=1" }, "\(received)")
        #expect(listener.receive(timeout: 0) == nil)
    }

    /// Pinged from the queue that serves the daemon: while that queue is wedged, no ping goes
    /// out (systemd then restarts the daemon); pings resume when it is free again.
    @Test func aWedgedServingQueueStopsThePings() throws {
        let listener = try UnixSocket(type: Int32(SOCK_DGRAM.rawValue))
        let serving = DispatchQueue(label: "test.serving")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000",
                                                     "WATCHDOG_PID": "\(getpid())"])
        #expect(notifier.startWatchdog(on: serving) == .milliseconds(200))
        defer { notifier.stopWatchdog() }
        #expect(listener.receive() == "WATCHDOG=1")
        let release = DispatchSemaphore(value: 0)
        let wedged = DispatchSemaphore(value: 0)
        serving.async { wedged.signal(); release.wait() }
        wedged.wait()
        while listener.receive(timeout: 0) != nil {}   // pings sent before the queue wedged
        // Three ping intervals (100 ms each) on, another thread sends a marker: a ping from the
        // wedged queue would have come before it, so the marker is the next datagram.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { _ = notifier.status("marker") }
        #expect(listener.receive() == "STATUS=marker")
        // The notifier's own queue is free all along: it is not what pings.
        #expect(notifier.queue.sync { true })
        release.signal()
        #expect(listener.receive(timeout: 2) == "WATCHDOG=1")
    }

    @Test func watchdogMeantForAnotherProcessIsIgnored() {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "200000"]).watchdogInterval == .milliseconds(200))
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "soon"]).watchdogInterval == nil)
    }
}

@Suite struct SystemdSocketActivationTests {
    @Test func findsTheListeningUnixStreamSocket() throws {
        let datagram = try UnixSocket(type: Int32(SOCK_DGRAM.rawValue))
        let unbound = try UnixSocket(type: Int32(SOCK_STREAM.rawValue), bind: false)
        let notListening = try UnixSocket(type: Int32(SOCK_STREAM.rawValue))
        let listening = try UnixSocket(type: Int32(SOCK_STREAM.rawValue), listen: true)
        let other = try UnixSocket(type: Int32(SOCK_STREAM.rawValue), listen: true)
        var pipeFDs: [Int32] = [0, 0]
        #expect(pipe(&pipeFDs) == 0)
        defer { close(pipeFDs[0]); close(pipeFDs[1]) }

        let fds = [pipeFDs[0], datagram.fd, unbound.fd, notListening.fd, listening.fd, other.fd]
        #expect(SystemdSocketActivation.unixStreamListener(among: fds) == listening.fd)
        #expect(SystemdSocketActivation.unixStreamListener(among: fds, path: other.path) == other.fd)
        #expect(SystemdSocketActivation.unixStreamListener(among: fds, path: "/nonexistent") == nil)
        #expect(SystemdSocketActivation.unixStreamListener(among: [pipeFDs[0], datagram.fd]) == nil)
    }

    @Test func noPassedSocketsWithoutSystemd() throws {
        // LISTEN_PID is not ours (or unset): nothing was passed.
        #expect(try SystemdSocketActivation.listenFileDescriptors() == [])
        #expect(try SystemdSocketActivation.passedUnixStreamListener() == nil)
    }
}
