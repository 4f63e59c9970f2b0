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

    /// `ROOT/class/net/NAME/FILE` as bytes.
    private func path(_ name: [UInt8], _ file: String) -> [UInt8] {
        Array(root.utf8) + Array("/class/net/".utf8) + name + [UInt8(ascii: "/")] + Array(file.utf8)
    }

    private func exists(_ path: [UInt8]) -> Bool { access(path.map { CChar(bitPattern: $0) } + [0], F_OK) == 0 }

    /// Up to `limit` bytes of a regular file; nil when it cannot be read (a FIFO or a device
    /// planted in a test tree is no wait).
    private func read(_ path: [UInt8], limit: Int) -> [UInt8]? {
        try? FileSystem.readRegularFile(pathBytes: path, limit: limit).bytes
    }
}
