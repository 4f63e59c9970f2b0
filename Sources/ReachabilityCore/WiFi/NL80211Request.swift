/// The requests reachd sends the kernel's nl80211 (generic netlink) family, as bytes, and the
/// control family's answer that names nl80211's id. Each request is a `struct nlmsghdr`, a
/// `struct genlmsghdr` and its `struct nlattr`s (each padded to 4 bytes), in host order.
public enum NL80211Request {
    // <linux/netlink.h>
    static let flagRequest: UInt16 = 0x1            // NLM_F_REQUEST
    static let flagDump: UInt16 = 0x300             // NLM_F_ROOT | NLM_F_MATCH
    // <linux/genetlink.h>
    /// `GENL_ID_CTRL`: the control family, which names the others.
    public static let controlFamily: UInt16 = 0x10
    static let controlGetFamily: UInt8 = 3          // CTRL_CMD_GETFAMILY
    static let controlNewFamily: UInt8 = 1          // CTRL_CMD_NEWFAMILY
    static let controlAttributeFamilyID: UInt16 = 1 // CTRL_ATTR_FAMILY_ID (u16)
    static let controlAttributeFamilyName: UInt16 = 2 // CTRL_ATTR_FAMILY_NAME (string)
    // <linux/nl80211.h>
    static let commandGetInterface: UInt8 = 5       // NL80211_CMD_GET_INTERFACE
    static let commandGetStation: UInt8 = 17        // NL80211_CMD_GET_STATION
    /// `NL80211_IFTYPE_STATION`: a managed-mode interface, the only kind with one access point.
    public static let interfaceTypeStation: UInt32 = 2

    /// `CTRL_CMD_GETFAMILY` for "nl80211".
    public static func getFamily(sequence: UInt32) -> [UInt8] {
        message(type: controlFamily, flags: flagRequest, sequence: sequence, command: controlGetFamily, version: 1,
                attributes: [(controlAttributeFamilyName, Array("nl80211".utf8) + [0])])
    }

    /// `NL80211_CMD_GET_INTERFACE`, a dump of every wireless interface.
    public static func getInterfaces(family: UInt16, sequence: UInt32) -> [UInt8] {
        message(type: family, flags: flagRequest | flagDump, sequence: sequence, command: commandGetInterface, version: 0,
                attributes: [])
    }

    /// `NL80211_CMD_GET_STATION`, a dump of the stations of interface `ifindex` (on a managed
    /// interface: its access point).
    public static func getStations(family: UInt16, ifindex: Int, sequence: UInt32) -> [UInt8] {
        message(type: family, flags: flagRequest | flagDump, sequence: sequence, command: commandGetStation, version: 0,
                attributes: [(NL80211Reply.attributeIfindex, bytes(of: UInt32(truncatingIfNeeded: ifindex)))])
    }

    /// nl80211's family id from the control family's answer to `getFamily` (nil: not in this
    /// datagram).
    /// - Throws: `NL80211ReplyError.kernel(errno: ENOENT)` when the kernel has no nl80211 (no
    ///   cfg80211), or framing that cannot be walked.
    public static func familyID(_ datagram: [UInt8], sequence: UInt32?) throws(NL80211ReplyError) -> UInt16? {
        var found: UInt16?
        let result: Result<Bool, NL80211ReplyError> = datagram.withUnsafeBytes { raw in
            Result { () throws(NL80211ReplyError) in
                try NetlinkMessageWalk.walk(raw, sequence: sequence, as: NL80211Reply.self) { type, _, payload in
                    guard type == controlFamily, payload.count >= NL80211Reply.genericHeaderSize,
                          payload[0] == controlNewFamily else { return }
                    let attributes = UnsafeRawBufferPointer(rebasing: payload[NL80211Reply.genericHeaderSize...])
                    _ = NL80211Reply.walk(attributes) { attribute, value in
                        if attribute == controlAttributeFamilyID, value.count >= 2 { found = value.loadUnaligned(as: UInt16.self) }
                    }
                }
            }
        }
        _ = try result.get()
        return found
    }

    /// One message: header, generic header, attributes.
    static func message(type: UInt16, flags: UInt16, sequence: UInt32, command: UInt8, version: UInt8,
                        attributes: [(UInt16, [UInt8])]) -> [UInt8] {
        var body: [UInt8] = [command, version, 0, 0]
        for (attribute, value) in attributes {
            body += bytes(of: UInt16(4 + value.count)) + bytes(of: attribute) + value
            body += [UInt8](repeating: 0, count: NL80211Reply.aligned(value.count) - value.count)
        }
        return bytes(of: UInt32(16 + body.count)) + bytes(of: type) + bytes(of: flags) + bytes(of: sequence)
            + bytes(of: UInt32(0)) + body
    }

    static func bytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }
}
