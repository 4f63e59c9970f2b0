import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sends IPv6 router advertisements from a test's namespace (python3, a raw ICMPv6 socket: hop
/// limit 255, from the link-local address, to all nodes), carrying the options a test builds
/// with the helpers here. The kernel on the other side of the link hands the options it does
/// not act on itself to rtnetlink (`RTM_NEWNDUSEROPT`).
public enum RouterAdvertiser {
    static let script = #"""
import binascii, socket, struct, sys
ifname, lifetime, options = sys.argv[1], int(sys.argv[2]), binascii.unhexlify(sys.argv[3])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
# type, code, checksum (the kernel fills it in), hop limit, flags, router lifetime, reachable, retransmit
ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, lifetime, 0, 0) + options
s.sendto(ra, ("ff02::1", 0, 0, socket.if_nametoindex(ifname)))
"""#

    /// Sends one advertisement out of `interface` in `namespace`, with `options` (their wire
    /// bytes, one after another) and `routerLifetime` (0: not a default router, so the kernel
    /// adds no route for it). Waits first until the interface's link-local address has passed
    /// duplicate address detection: the kernel ignores advertisements from anything else.
    public static func send(from namespace: TestNamespace, interface: String, options: [[UInt8]], routerLifetime: Int = 0) throws {
        try waitForLinkLocal(namespace, interface)
        let hex = options.joined().map { String(format: "%02x", $0) }.joined()
        try sh("ip netns exec \(namespace.name) python3 -c '\(script)' \(interface) \(routerLifetime) '\(hex)'")
    }

    static let floodScript = #"""
import binascii, socket, struct, sys, time
ifname, count, rate, newdns = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
sets = [binascii.unhexlify(h) for h in sys.argv[5].split(",") if h] or [b""]
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
index = socket.if_nametoindex(ifname)
start = time.monotonic()
for i in range(count):
    options = sets[i % len(sets)]
    if newdns:
        server = socket.inet_pton(socket.AF_INET6, "2001:db8:ffff::%x" % (i % 65536 + 1))
        options += struct.pack("!BBHI", 25, 3, 0, 600) + server
    ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + options
    s.sendto(ra, ("ff02::1", 0, 0, index))
    delay = start + (i + 1) / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
print("%.3f" % (time.monotonic() - start))
"""#

    /// Sends `count` advertisements out of `interface` in `namespace`, `perSecond` of them a
    /// second, with the option sets of `cycle` in turn (and, `newDNSServer`, an RDNSS option with
    /// another server in each): an attacker on the link. Returns the seconds the sending took.
    @discardableResult
    public static func flood(from namespace: TestNamespace, interface: String, cycle: [[[UInt8]]], count: Int,
                             perSecond: Double, newDNSServer: Bool = false) throws -> Double {
        try waitForLinkLocal(namespace, interface)
        let sets = cycle.map { $0.joined().map { String(format: "%02x", $0) }.joined() }.joined(separator: ",")
        let output = try sh("ip netns exec \(namespace.name) python3 -c '\(floodScript)' \(interface) \(count) \(perSecond) "
                            + "\(newDNSServer ? 1 : 0) '\(sets)'")
        return Double(output.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    static let rotationScript = #"""
import socket, struct, sys, time
ifname, routers, count, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, 78, 1)  # IPV6_FREEBIND: a source address that is not this host's
# Not back to this namespace, whose kernel would take the routers as its own and then refuse
# their addresses as sources (EINVAL).
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
index = socket.if_nametoindex(ifname)
failures = {}
def advertise(router, lifetime):
    source = socket.inet_pton(socket.AF_INET6, "fe80::1:%x:%x" % (router >> 16, router & 0xffff))
    ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, lifetime, 0, 0)
    for attempt in range(3):
        try:
            s.sendmsg([ra], [(socket.IPPROTO_IPV6, socket.IPV6_PKTINFO, source + struct.pack("@I", index))], 0, ("ff02::1", 0, 0, index))
            return
        except OSError as error:  # a full device queue on a loaded machine (ENOBUFS): once more
            failures[error.strerror] = failures.get(error.strerror, 0) + 1
            time.sleep(0.002)
start = time.monotonic()
for i in range(count):
    advertise(i + 1, 1800)
    if i >= routers:
        advertise(i + 1 - routers, 0)
    delay = start + (i + 1) / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
print("%.3f" % (time.monotonic() - start))
if failures:
    print("send failures:", failures, file=sys.stderr)
# A flood that lost a few advertisements is still a flood; one that could not send is not.
sys.exit(1 if sum(failures.values()) > count // 10 else 0)
"""#

    /// Starts announcing `count` routers out of `interface` in `namespace`, `perSecond` of them a
    /// second, each from a link-local address of its own (a default route in the other side's
    /// kernel), `routers` of them at a time: each new one past that number comes with the oldest
    /// one's withdrawal (router lifetime 0). What a busy or hostile dual-stack LAN does to the
    /// routing table. The sender prints the seconds it took when it ends.
    public static func rotateRouters(from namespace: TestNamespace, interface: String, routers: Int, count: Int,
                                     perSecond: Double) throws -> Child {
        try waitForLinkLocal(namespace, interface)
        return try Child(ipCommand, ["netns", "exec", namespace.name, "python3", "-c", rotationScript, interface,
                                     String(routers), String(count), String(perSecond)])
    }

    /// Waits until the interface's link-local address has passed duplicate address detection:
    /// the kernel ignores advertisements from anything else.
    private static func waitForLinkLocal(_ namespace: TestNamespace, _ interface: String) throws {
        guard waitUntil(timeout: 15, {
            let lines = ((try? namespace.ip("-6 addr show dev \(interface) scope link", check: false)) ?? "").split(separator: "\n")
            return lines.contains { $0.contains("inet6 fe80") && !$0.contains("tentative") }
        }) else {
            throw ShellError(command: "link-local address on \(interface) in \(namespace.name)", status: 1, output: "still tentative")
        }
    }

    /// An option: type, length in 8-octet units, `body`, padded with zeros.
    public static func option(_ type: Int, _ body: [UInt8]) -> [UInt8] {
        var bytes = [UInt8(type), 0] + body
        while bytes.count % 8 != 0 { bytes.append(0) }
        bytes[1] = UInt8(truncatingIfNeeded: bytes.count / 8)
        return bytes
    }

    /// RFC 8106 RDNSS (25).
    public static func rdnss(_ servers: [String], lifetime: UInt32) -> [UInt8] {
        option(25, [0, 0] + u32(lifetime) + servers.flatMap(ipv6))
    }

    /// RFC 8106 DNSSL (31).
    public static func dnssl(_ domains: [String], lifetime: UInt32) -> [UInt8] {
        var names: [UInt8] = []
        for name in domains {
            for label in name.split(separator: ".") { names += [UInt8(label.utf8.count)] + Array(label.utf8) }
            names.append(0)
        }
        return option(31, [0, 0] + u32(lifetime) + names)
    }

    /// RFC 8910 captive portal (37): the URI's bytes as given.
    public static func captivePortal(_ uri: [UInt8]) -> [UInt8] { option(37, uri) }
    public static func captivePortal(_ uri: String) -> [UInt8] { captivePortal(Array(uri.utf8)) }

    /// RFC 8781 PREF64 (38) for a /96 `prefix`, `lifetime` in seconds (a multiple of 8).
    public static func pref64(_ prefix: String, lifetime: UInt16) -> [UInt8] {
        let word = (lifetime / 8) << 3
        return [38, 2, UInt8(word >> 8), UInt8(word & 0xff)] + Array(ipv6(prefix).prefix(12))
    }

    static func u32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    static func ipv6(_ text: String) -> [UInt8] {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return [UInt8](repeating: 0, count: 16) }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}

/// A certificate authority made for one test with `openssl` (EC P-256, a day's validity), and
/// server certificates it signs; all in a temporary directory removed by `remove()`.
public final class TestCertificateAuthority: @unchecked Sendable {
    public let directory: String
    /// The CA's certificate (PEM): what `CAFile=` names.
    public var certificate: String { directory + "/ca.pem" }

    public init() throws {
        directory = NSTemporaryDirectory() + "\(TestResources.prefix)ca-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try sh("cd \(directory) && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
               + "-keyout ca.key -out ca.pem -days 1 -subj '/CN=reachd test CA' 2>&1")
    }

    /// A certificate for `ipAddress` signed by this CA (or, `selfSigned`, by nobody it knows):
    /// the paths of the certificate and its key.
    public func serverCertificate(ipAddress: String, name: String = "server", selfSigned: Bool = false) throws -> (certificate: String, key: String) {
        let extensions = "\(directory)/\(name).ext"
        try "basicConstraints=CA:FALSE\nsubjectAltName=IP:\(ipAddress)\nextendedKeyUsage=serverAuth\n"
            .write(toFile: extensions, atomically: true, encoding: .utf8)
        if selfSigned {
            try sh("cd \(directory) && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                   + "-keyout \(name).key -out \(name).pem -days 1 -subj '/CN=\(ipAddress)' -addext 'subjectAltName=IP:\(ipAddress)' 2>&1")
        } else {
            try sh("cd \(directory) && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                   + "-keyout \(name).key -out \(name).csr -subj '/CN=\(ipAddress)' 2>&1 && "
                   + "openssl x509 -req -in \(name).csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
                   + "-extfile \(name).ext -out \(name).pem 2>&1")
        }
        return ("\(directory)/\(name).pem", "\(directory)/\(name).key")
    }

    /// A certificate for the host name `dnsName` signed by this CA: the paths of the certificate
    /// and its key.
    public func serverCertificate(dnsName: String, name: String = "named") throws -> (certificate: String, key: String) {
        try "basicConstraints=CA:FALSE\nsubjectAltName=DNS:\(dnsName)\nextendedKeyUsage=serverAuth\n"
            .write(toFile: "\(directory)/\(name).ext", atomically: true, encoding: .utf8)
        try sh("cd \(directory) && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
               + "-keyout \(name).key -out \(name).csr -subj '/CN=\(dnsName)' 2>&1 && "
               + "openssl x509 -req -in \(name).csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
               + "-extfile \(name).ext -out \(name).pem 2>&1")
        return ("\(directory)/\(name).pem", "\(directory)/\(name).key")
    }

    public func remove() { try? FileManager.default.removeItem(atPath: directory) }

    deinit { remove() }
}
