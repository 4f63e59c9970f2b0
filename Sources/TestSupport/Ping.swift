import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `ping(from:to:count:interval:timeout:)` saw.
public struct PingResult: Sendable, Equatable {
    public var sent: Int
    /// Each echo reply's round-trip time, seconds, in the order they came.
    public var rtts: [TimeInterval]

    public var received: Int { rtts.count }
    /// Echoes without a reply, percent.
    public var lossPercent: Double { sent == 0 ? 0 : Double(sent - received) / Double(sent) * 100 }
    /// The mean RTT, nil when nothing came back.
    public var average: TimeInterval? { rtts.isEmpty ? nil : rtts.reduce(0, +) / Double(rtts.count) }
}

/// ICMP echo from inside `namespace` to the IPv4 `address`, as `ping -c COUNT -i INTERVAL`
/// does (the machine has no ping binary): `count` echoes `interval` seconds apart, then waits
/// `timeout` seconds after the last one for late replies. A raw socket: needs root.
public func ping(from namespace: TestNamespace, to address: String, count: Int, interval: TimeInterval,
                 timeout: TimeInterval) throws -> PingResult {
    let fd = try inNetworkNamespace(namespace) { () throws -> Int32 in
        let fd = socket(AF_INET, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_ICMP))
        guard fd >= 0 else { throw FixtureError("raw ICMP socket") }
        return fd
    }
    defer { close(fd) }
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    guard inet_pton(AF_INET, address, &destination.sin_addr) == 1 else { throw FixtureError("not an IPv4 address: \(address)", errno: EINVAL) }
    let identifier = UInt16(truncatingIfNeeded: getpid() ^ Int32(truncatingIfNeeded: monotonicNanoseconds()))
    var sentAt: [UInt16: UInt64] = [:]
    var rtts: [TimeInterval] = []
    let start = monotonicNanoseconds()
    let nanos = { (seconds: TimeInterval) in UInt64(max(0, seconds) * 1e9) }
    let end = start + nanos(interval) * UInt64(max(0, count - 1)) + nanos(timeout)
    var next = 0
    var buffer = [UInt8](repeating: 0, count: 2048)
    while true {
        let now = monotonicNanoseconds()
        if next < count && now >= start + nanos(interval) * UInt64(next) {
            var packet = [UInt8](repeating: 0, count: 64)
            packet[0] = 8   // echo request
            packet[4] = UInt8(identifier >> 8); packet[5] = UInt8(identifier & 0xFF)
            packet[6] = UInt8(next >> 8); packet[7] = UInt8(next & 0xFF)
            let sum = internetChecksum(packet)
            packet[2] = UInt8(sum >> 8); packet[3] = UInt8(sum & 0xFF)
            sentAt[UInt16(next)] = monotonicNanoseconds()
            let sent = packet.withUnsafeBytes { bytes in
                withUnsafePointer(to: &destination) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if sent < 0 { sentAt[UInt16(next)] = nil }   // unreachable: counted as lost
            next += 1
            continue
        }
        if now >= end || (next == count && sentAt.isEmpty) { break }
        let wakeAt = next < count ? min(end, start + nanos(interval) * UInt64(next)) : end
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(max(1, (wakeAt - min(wakeAt, now)) / 1_000_000))) > 0 else { continue }
        let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        let arrived = monotonicNanoseconds()
        guard received >= 28 else { continue }
        let header = Int(buffer[0] & 0x0F) * 4
        guard received >= header + 8, buffer[header] == 0,   // echo reply
              UInt16(buffer[header + 4]) << 8 | UInt16(buffer[header + 5]) == identifier else { continue }
        let sequence = UInt16(buffer[header + 6]) << 8 | UInt16(buffer[header + 7])
        if let sent = sentAt.removeValue(forKey: sequence) { rtts.append(TimeInterval(arrived - sent) / 1e9) }
    }
    return PingResult(sent: count, rtts: rtts)
}

/// RFC 1071's checksum.
private func internetChecksum(_ bytes: [UInt8]) -> UInt16 {
    var sum: UInt32 = 0
    var index = 0
    while index + 1 < bytes.count {
        sum += UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
        index += 2
    }
    if index < bytes.count { sum += UInt32(bytes[index]) << 8 }
    while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
    return ~UInt16(sum)
}
