import FoundationEssentials
import ReachabilityCore

/// Reads what sysfs says about a network interface under an injectable root
/// (`ROOT/class/net/NAME/…`), so tests can mark a veth as Wi-Fi with a fake tree.
/// Missing files are no error: they just add no evidence.
struct SysfsInterfaceFacts {
    let root: String

    /// `DEVTYPE=` of `class/net/NAME/uevent`, or nil.
    func devtype(_ name: String) -> String? {
        guard let text = try? String(contentsOfFile: path(name, "uevent"), encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count)).trimmingWhitespace
        }
        return nil
    }

    /// `class/net/NAME/wireless` or `class/net/NAME/phy80211` exists.
    func hasWireless(_ name: String) -> Bool {
        exists(path(name, "wireless")) || exists(path(name, "phy80211"))
    }

    /// `class/net/NAME/tun_flags` exists.
    func hasTunFlags(_ name: String) -> Bool { exists(path(name, "tun_flags")) }

    /// The facts for the kind rules, sysfs evidence added to the netlink facts.
    func kindFacts(for link: LinkFacts) -> InterfaceKindFacts {
        // A name with a slash or "." would walk out of class/net; such names do not exist, but be strict.
        let safe = !link.name.contains("/") && link.name != "." && link.name != ".."
        return InterfaceKindFacts(name: link.name, rtnlKind: link.rtnlKind, arpType: link.arpType, isLoopback: link.loopback,
                                  devtype: safe ? devtype(link.name) : nil,
                                  hasWireless: safe && hasWireless(link.name),
                                  hasTunFlags: safe && hasTunFlags(link.name))
    }

    private func path(_ name: String, _ file: String) -> String { "\(root)/class/net/\(name)/\(file)" }
    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}
