import Foundation

/// A tun device held open by a small python process (a tun nobody reads has no carrier), as a
/// CLAT or a VPN daemon holds its tun. It reads every packet and writes, for each IPv4 TCP SYN,
/// a line `DESTINATION:PORT` to `synLog`: a marker of what left by the tun. Nothing is answered.
public final class HeldTun: @unchecked Sendable {
    public let name: String
    /// Where the SYNs seen are listed, one `address:port` a line.
    public let synLog: String
    private let process: Child

    public init(namespace: TestNamespace, name: String) throws {
        self.name = name
        synLog = NSTemporaryDirectory() + "\(namespace.name)-tun-\(name).log"
        try? FileManager.default.removeItem(atPath: synLog)
        _ = FileManager.default.createFile(atPath: synLog, contents: nil)
        try namespace.ip("tuntap add dev \(name) mode tun")
        let script = """
        import fcntl, os, socket, struct, time
        fd = os.open("/dev/net/tun", os.O_RDWR)
        fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"\(name)", 0x0001 | 0x1000))
        while True:
            try:
                packet = os.read(fd, 65536)
            except OSError:
                time.sleep(0.1)
                continue
            if len(packet) >= 40 and packet[0] >> 4 == 4 and packet[9] == 6:
                start = (packet[0] & 15) * 4
                port, flags = struct.unpack("!H", packet[start + 2:start + 4])[0], packet[start + 13]
                if flags & 0x02 and not flags & 0x10:
                    with open("\(synLog)", "a") as log:
                        log.write("%s:%d\\n" % (socket.inet_ntoa(packet[16:20]), port))
        """
        process = try namespace.startPython(script)
    }

    /// The SYNs seen so far.
    public var syns: [String] {
        ((try? String(contentsOfFile: synLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// SIGKILL: children of the test process inherit a mask that blocks SIGTERM.
    public func stop() {
        process.killAndWait()
        try? FileManager.default.removeItem(atPath: synLog)
    }

    deinit { stop() }
}
