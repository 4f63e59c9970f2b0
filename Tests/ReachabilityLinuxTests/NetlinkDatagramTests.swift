import CNetlink
import Foundation
import ReachabilityCore
import ReachabilitySystem
import Synchronization
import Testing
import TestSupport
@testable import ReachabilityLinux

/// How a datagram is cut into messages: what the monitor's receive hands to the decoder.
@Suite struct NetlinkDatagramTests {
    /// A message of `type` with `payload`, its length field `lengthDelta` off the truth, padded
    /// as the next message of a datagram expects.
    static func message(type: Int, payload: [UInt8], lengthDelta: Int = 0) -> [UInt8] {
        NetlinkDecoderBoundsTests.message(type: type, body: payload, attributes: [], lengthDelta: lengthDelta)
            + [UInt8](repeating: 0, count: NetlinkAttributes.aligned(payload.count) - payload.count)
    }

    /// Each item as text: `message <type> <length>`, `overrun`, `error <number>`.
    static func items(_ datagram: [UInt8]) -> [String] {
        var items: [String] = []
        datagram.withUnsafeBytes { bytes in
            NetlinkDatagram.forEach(in: bytes) { item in
                switch item {
                case .message(let message):
                    items.append("message \(message.loadUnaligned(fromByteOffset: 4, as: UInt16.self)) \(message.count)")
                case .overrun: items.append("overrun")
                case .error(let code): items.append("error \(code)")
                }
            }
        }
        return items
    }

    @Test func messagesInOrderWithTheirPaddingSkipped() {
        // Payloads of 5 and 8 bytes: the first is padded to 8, and the second starts after it.
        let datagram = Self.message(type: RTM_NEWLINK, payload: [1, 2, 3, 4, 5])
            + Self.message(type: RTM_NEWADDR, payload: [UInt8](repeating: 9, count: 8))
        #expect(Self.items(datagram) == ["message \(RTM_NEWLINK) 21", "message \(RTM_NEWADDR) 24"])
    }

    @Test func controlMessages() {
        let errno = Int32(EPERM)
        let errorPayload = withUnsafeBytes(of: -errno) { Array($0) } + [UInt8](repeating: 0, count: 16)
        let datagram = Self.message(type: NetlinkDatagram.noop, payload: [])
            + Self.message(type: NetlinkDatagram.error, payload: errorPayload)
            + Self.message(type: NetlinkDatagram.overrun, payload: [])
            + Self.message(type: RTM_NEWROUTE, payload: [0, 0, 0, 0])
            + Self.message(type: NetlinkDatagram.done, payload: [0, 0, 0, 0])
        #expect(Self.items(datagram) == ["error \(EPERM)", "overrun", "message \(RTM_NEWROUTE) 20"])
    }

    @Test func aBadLengthEndsTheDatagram() {
        let good = Self.message(type: RTM_NEWLINK, payload: [1, 2, 3, 4])
        // Longer than what is left, shorter than a header, and a header cut short.
        #expect(Self.items(good + Self.message(type: RTM_NEWLINK, payload: [1, 2, 3, 4], lengthDelta: 1)) == ["message \(RTM_NEWLINK) 20"])
        #expect(Self.items(good + Self.message(type: RTM_NEWLINK, payload: [1, 2, 3, 4], lengthDelta: -5) + good) == ["message \(RTM_NEWLINK) 20"])
        #expect(Self.items(good + Array(good.prefix(15))) == ["message \(RTM_NEWLINK) 20"])
        #expect(Self.items([]).isEmpty)
        // Every prefix: no read outside the bytes, and never a message that was not whole.
        let two = good + good
        for length in 0...two.count {
            #expect(Self.items(Array(two.prefix(length))).count == length / 20)
        }
    }
}

extension SystemTests {
/// The monitor's receive on a real socket: what it does with a datagram larger than its buffer,
/// and with one that did not come from the kernel.
@Suite struct NetlinkReceiveTests {
    /// Receives until EAGAIN; the results, and the links named in the messages.
    static func drain(_ socket: NetlinkSocket) -> (results: [NetlinkReceiveResult], links: [String]) {
        var results: [NetlinkReceiveResult] = []
        var links: [String] = []
        while true {
            let result = socket.receive { message in
                for change in NetlinkMessageDecoder.changes(in: message) {
                    if case .link(let facts) = change { links.append(facts.name) }
                }
            }
            if result == .drained { return (results, links) }
            results.append(result)
            if case .failed = result { return (results, links) }
        }
    }

    @Test(.needsRoot()) func aDatagramLargerThanTheBufferIsAnOverrunAndTheNextOneFits() throws {
        let ns = try TestNamespace(tag: "r")
        defer { ns.destroy() }
        let socket = try NetworkNamespace.run(in: ns.name) {
            let socket = try NetlinkSocket(datagramBufferSize: 64)
            try socket.addMemberships([RTNLGRP_LINK])
            return socket
        }
        try ns.ip("link add rx0 type veth peer name rx1")
        let first = Self.drain(socket)
        // A link's notification is far larger than 64 bytes: lost, and said so.
        #expect(first.results.first == .overrun, "\(first.results)")
        try ns.ip("link set rx0 up")
        let second = Self.drain(socket)
        #expect(!second.results.contains(.overrun), "\(second.results)")
        #expect(second.links.contains("rx0"), "\(second.links)")
    }

    /// A well-formed RTM_NEWLINK of a link `name`, as the kernel would send it.
    static func linkMessage(named name: String) -> [UInt8] {
        let link: [UInt8] = [0, 0, 1, 0, 0xa0, 0x0f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]   // index 4000, up
        return NetlinkDecoderBoundsTests.message(type: RTM_NEWLINK, body: link,
                                                 attributes: [(Int(IFLA_IFNAME), Array(name.utf8) + [0])])
    }

    /// The port of a netlink socket (`getsockname`).
    static func port(of fd: Int32) throws -> UInt32 {
        var address = sockaddr_nl()
        var length = socklen_t(MemoryLayout<sockaddr_nl>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        try #require(named == 0 && address.nl_pid != 0)
        return address.nl_pid
    }

    /// Sends `bytes` from a NETLINK_ROUTE socket of its own in namespace `ns`, to the socket with
    /// port `port`, or to the multicast `groups` (and then to the sender itself, not the kernel).
    static func send(_ bytes: [UInt8], in ns: TestNamespace, port: UInt32? = nil, groups: UInt32 = 0) throws {
        let sender = try NetworkNamespace.run(in: ns.name) {
            socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        }
        try #require(sender >= 0)
        defer { close(sender) }
        var own = sockaddr_nl()
        own.nl_family = sa_family_t(AF_NETLINK)
        let bound = withUnsafePointer(to: &own) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sender, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
        }
        try #require(bound == 0)
        var target = sockaddr_nl()
        target.nl_family = sa_family_t(AF_NETLINK)
        target.nl_pid = try port ?? Self.port(of: sender)
        target.nl_groups = groups
        let sent = bytes.withUnsafeBytes { payload in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(sender, payload.baseAddress, payload.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
        try #require(sent == bytes.count, "\(Errno.current("sendto"))")
    }

    @Test(.needsRoot()) func aDatagramFromAnotherProcessIsDropped() throws {
        let ns = try TestNamespace(tag: "s")
        defer { ns.destroy() }
        let listener = try NetworkNamespace.run(in: ns.name) {
            let listener = try NetlinkSocket()
            try listener.addMemberships([RTNLGRP_LINK])
            return listener
        }
        let bytes = Self.linkMessage(named: "spoof0")
        #expect(NetlinkDecoderBoundsTests.decode(bytes).count == 1)
        try Self.send(bytes, in: ns, port: try Self.port(of: listener.fileDescriptor))
        // And a real one after it, so the listener has something to show it still works.
        try ns.ip("link add real0 type veth peer name real1")
        let received = Self.drain(listener)
        #expect(!received.links.contains("spoof0"), "\(received.links)")
        #expect(received.links.contains("real0"), "\(received.links)")
        let foreign = received.results.filter { if case .foreign = $0 { return true } else { return false } }
        #expect(foreign.count == 1, "\(received.results)")
        #expect(received.results.allSatisfy { $0 == .received || foreign.contains($0) }, "\(received.results)")
    }

    /// The same through the monitor, from a process that multicasts to the link group as root may:
    /// the status never shows the link, and the monitor says what it dropped.
    @Test(.needsRoot()) func theMonitorDropsALinkAnotherProcessAnnounces() throws {
        let ns = try TestNamespace(tag: "m")
        defer { ns.destroy() }
        let lines = Mutex([String]())
        let log = LogSink(threshold: .debug) { _, line in lines.withLock { $0.append(line) } }
        let sysfs = try FakeSysfs()
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(ns, sysfs: sysfs), log: log)
        try monitor.start()
        defer { monitor.stop() }
        try Self.send(Self.linkMessage(named: "spoof0"), in: ns, groups: UInt32(RTMGRP_LINK))
        try ns.ip("link add real0 type veth peer name real1")
        #expect(waitUntil { monitor.status.interfaces.contains { $0.name == "real0" } })
        #expect(!monitor.status.interfaces.contains { $0.name == "spoof0" })
        #expect(lines.withLock { $0 }.contains { $0.hasPrefix("dropped a netlink message sent by another process (port ") },
                "\(lines.withLock { $0 })")
    }
}
}
