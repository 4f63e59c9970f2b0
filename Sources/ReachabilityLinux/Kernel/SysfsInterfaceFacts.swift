import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// Reads what sysfs says about a network interface under an injectable root
/// (`ROOT/class/net/NAME/…`), so tests can mark a veth as Wi-Fi with a fake tree.
/// Missing files are no error: they just add no evidence. Paths are made of the name's bytes
/// as the kernel has them, so a name that is not UTF-8 is looked up under its own name.
struct SysfsInterfaceFacts {
    let root: String

    /// `DEVTYPE=` of `class/net/NAME/uevent`, or nil.
    func devtype(_ name: [UInt8]) -> String? {
        guard let bytes = read(path(name, "uevent"), limit: 4096) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count)).trimmingWhitespace
        }
        return nil
    }

    /// `class/net/NAME/wireless` or `class/net/NAME/phy80211` exists.
    func hasWireless(_ name: [UInt8]) -> Bool {
        exists(path(name, "wireless")) || exists(path(name, "phy80211"))
    }

    /// `class/net/NAME/tun_flags` exists.
    func hasTunFlags(_ name: [UInt8]) -> Bool { exists(path(name, "tun_flags")) }

    /// The facts for the kind rules, sysfs evidence added to the netlink facts.
    func kindFacts(for link: LinkFacts) -> InterfaceKindFacts {
        let name = link.rawName ?? Array(link.name.utf8)
        // A name with a slash or "." would walk out of class/net; such names do not exist, but be strict.
        let safe = !name.isEmpty && !name.contains(UInt8(ascii: "/")) && !name.contains(0)
            && name != Array(".".utf8) && name != Array("..".utf8)
        return InterfaceKindFacts(name: link.name, rtnlKind: link.rtnlKind, arpType: link.arpType, isLoopback: link.loopback,
                                  devtype: safe ? devtype(name) : nil,
                                  hasWireless: safe && hasWireless(name),
                                  hasTunFlags: safe && hasTunFlags(name))
    }

    /// `ROOT/class/net/NAME/FILE` as a C string's bytes (NUL included).
    private func path(_ name: [UInt8], _ file: String) -> [CChar] {
        let bytes = Array(root.utf8) + Array("/class/net/".utf8) + name + [UInt8(ascii: "/")] + Array(file.utf8) + [0]
        return bytes.map { CChar(bitPattern: $0) }
    }

    private func exists(_ path: [CChar]) -> Bool { access(path, F_OK) == 0 }

    /// Up to `limit` bytes of a file; nil when it cannot be read.
    private func read(_ path: [CChar], limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var total = 0
        while total < limit {
            let offset = total
            let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in
                    try retryingOnInterrupt("read") { Glibc.read(fd, raw.baseAddress.map { $0 + offset }, limit - offset) }
                }
            }
            guard case .success(let count) = received, count > 0 else { break }
            total += count
        }
        return Array(buffer.prefix(total))
    }
}
