/// What stopped an nl80211 reply from being read: `.kernel(errno:)` carries the positive errno
/// (`ENODEV` for an interface that went away, `EOPNOTSUPP` for a driver without station
/// dumps, …).
public typealias NL80211ReplyError = NetlinkReplyError<NL80211Reply>

/// Reads the datagrams of an nl80211 reply (generic netlink: `struct nlmsghdr`, `struct
/// genlmsghdr`, then `struct nlattr`s) by offset, every length checked against the bytes given,
/// so that any byte string is safe. Station records (`NL80211_CMD_NEW_STATION`) and interface
/// records (`NL80211_CMD_NEW_INTERFACE`) are kept; other commands are passed over. A record
/// whose attributes break (a length shorter than its header or past its message) is skipped and
/// counted; framing that breaks the walk (a message length past the datagram) throws. An
/// attribute shorter than its type is ignored: that field reads as not sent.
///
/// The numbers are those of the kernel's `include/uapi/linux/nl80211.h`, `netlink.h` and
/// `genetlink.h` (enum positions, stable: the kernel only appends).
public enum NL80211Reply: NetlinkReplyProtocol {
    /// Where the walk of one datagram ended.
    public struct Progress: Equatable, Sendable {
        /// `NLMSG_DONE` was read: a dump is complete.
        public var done: Bool
        /// Records that could not be read.
        public var skipped: Int
        /// A message carried `NLM_F_DUMP_INTR`: the kernel's list changed during the dump, which
        /// should be asked for again.
        public var interrupted: Bool
    }

    /// The records read, in the order the kernel sent them.
    public struct Records: Equatable, Sendable {
        public var stations: [NL80211StationInfo] = []
        public var interfaces: [NL80211InterfaceInfo] = []
        public init() {}
    }

    // <linux/netlink.h>
    static let typeFirstFamily: UInt16 = 16         // NLMSG_MIN_TYPE: the first non-control type
    static let flagDumpInterrupted: UInt16 = 0x10   // NLM_F_DUMP_INTR
    static let attributeTypeMask: UInt16 = 0x3FFF   // ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER)
    /// The words of `NL80211ReplyError`'s descriptions.
    public static let protocolName = "nl80211", requestNoun = "request", replyNoun = "reply"
    // <linux/genetlink.h>
    static let genericHeaderSize = 4                // GENL_HDRLEN: cmd, version, reserved
    // <linux/nl80211.h>: enum nl80211_commands
    static let commandNewInterface: UInt8 = 7       // NL80211_CMD_NEW_INTERFACE
    static let commandNewStation: UInt8 = 19        // NL80211_CMD_NEW_STATION
    // enum nl80211_attrs
    static let attributeIfindex: UInt16 = 3         // NL80211_ATTR_IFINDEX (u32)
    static let attributeInterfaceType: UInt16 = 5   // NL80211_ATTR_IFTYPE (u32)
    static let attributeMAC: UInt16 = 6             // NL80211_ATTR_MAC (6 bytes)
    static let attributeStationInfo: UInt16 = 21    // NL80211_ATTR_STA_INFO (nested)
    static let attributeFrequency: UInt16 = 38      // NL80211_ATTR_WIPHY_FREQ (u32, MHz)
    static let attributeSSID: UInt16 = 52           // NL80211_ATTR_SSID (binary)
    // enum nl80211_sta_info
    static let stationSignal: UInt16 = 7            // NL80211_STA_INFO_SIGNAL (u8, dBm)
    static let stationTxBitrate: UInt16 = 8         // NL80211_STA_INFO_TX_BITRATE (nested rate info)
    static let stationSignalAverage: UInt16 = 13    // NL80211_STA_INFO_SIGNAL_AVG (u8, dBm)
    static let stationRxBitrate: UInt16 = 14        // NL80211_STA_INFO_RX_BITRATE (nested rate info)
    static let stationFlags: UInt16 = 17            // NL80211_STA_INFO_STA_FLAGS (struct nl80211_sta_flag_update)
    static let stationBeaconSignalAverage: UInt16 = 30 // NL80211_STA_INFO_BEACON_SIGNAL_AVG (u8, dBm)
    // enum nl80211_rate_info
    static let rateBitrate: UInt16 = 1              // NL80211_RATE_INFO_BITRATE (u16, 100 kbit/s)
    static let rateBitrate32: UInt16 = 5            // NL80211_RATE_INFO_BITRATE32 (u32, 100 kbit/s)
    // enum nl80211_sta_flags
    static let flagAssociated: UInt32 = 1 << 7      // NL80211_STA_FLAG_ASSOCIATED

    /// Reads one datagram, appending each record to `records`.
    /// - Parameters:
    ///   - family: nl80211's generic netlink family id (resolved at run time through
    ///     `CTRL_CMD_GETFAMILY`); messages of other types are passed over. nil: every
    ///     non-control type is read.
    ///   - sequence: the request's sequence number; messages of another are passed over.
    /// - Throws: `NL80211ReplyError`: the kernel's error, an overrun, or framing that cannot be walked.
    public static func parse(_ datagram: UnsafeRawBufferPointer, family: UInt16?, sequence: UInt32?,
                             into records: inout Records) throws(NL80211ReplyError) -> Progress {
        var skipped = 0
        var interrupted = false
        let done = try NetlinkMessageWalk.walk(datagram, sequence: sequence, as: NL80211Reply.self) { type, flags, payload in
            guard type >= typeFirstFamily, family == nil || family == type else { return }
            if flags & flagDumpInterrupted != 0 { interrupted = true }
            if !read(payload, into: &records) { skipped += 1 }
        }
        return Progress(done: done, skipped: skipped, interrupted: interrupted)
    }

    /// `parse(_:family:sequence:into:)` on an array (tests and the fuzz target).
    public static func parse(_ bytes: [UInt8], family: UInt16? = nil, sequence: UInt32? = nil,
                             into records: inout Records) throws(NL80211ReplyError) -> Progress {
        let result: Result<Progress, NL80211ReplyError> = bytes.withUnsafeBytes { raw in
            Result { () throws(NL80211ReplyError) in try parse(raw, family: family, sequence: sequence, into: &records) }
        }
        return try result.get()
    }

    /// One generic netlink message; false when it was a record that could not be read.
    static func read(_ payload: UnsafeRawBufferPointer, into records: inout Records) -> Bool {
        guard payload.count >= genericHeaderSize else { return false }
        let attributes = UnsafeRawBufferPointer(rebasing: payload[genericHeaderSize...])
        switch payload[0] {
        case commandNewStation:
            guard let station = station(attributes) else { return false }
            records.stations.append(station)
        case commandNewInterface:
            guard let interface = interface(attributes) else { return false }
            records.interfaces.append(interface)
        default:
            break   // commands this reader does not keep
        }
        return true
    }

    /// A station record's attributes; nil when they break.
    static func station(_ attributes: UnsafeRawBufferPointer) -> NL80211StationInfo? {
        var info = NL80211StationInfo()
        var nestedBroken = false
        let walked = walk(attributes) { type, value in
            switch type {
            case attributeIfindex: info.ifindex = u32(value).map(Int.init)
            case attributeMAC: if value.count >= 6 { info.mac = Array(value[0..<6]) }
            case attributeStationInfo:
                let readable = walk(value) { type, value in
                    switch type {
                    case stationSignal: info.signalDbm = s8(value)
                    case stationSignalAverage: info.signalAverageDbm = s8(value)
                    case stationBeaconSignalAverage: info.beaconSignalAverageDbm = s8(value)
                    case stationTxBitrate:
                        if let rate = bitrate(value) { info.txBitrateKbps = rate } else { nestedBroken = true }
                    case stationRxBitrate:
                        if let rate = bitrate(value) { info.rxBitrateKbps = rate } else { nestedBroken = true }
                    case stationFlags:
                        if let mask = u32(value), value.count >= 8, mask & flagAssociated != 0 {
                            info.associated = value.loadUnaligned(fromByteOffset: 4, as: UInt32.self) & flagAssociated != 0
                        }
                    default: break
                    }
                }
                if !readable { nestedBroken = true }
            default: break
            }
        }
        return walked && !nestedBroken ? info : nil
    }

    /// An interface record's attributes; nil when they break.
    static func interface(_ attributes: UnsafeRawBufferPointer) -> NL80211InterfaceInfo? {
        var info = NL80211InterfaceInfo()
        let walked = walk(attributes) { type, value in
            switch type {
            case attributeIfindex: info.ifindex = u32(value).map(Int.init)
            case attributeInterfaceType: info.interfaceType = u32(value)
            case attributeFrequency: info.frequencyMHz = u32(value)
            case attributeSSID: info.ssid = Array(value.prefix(WiFiSSID.maximumLength))
            default: break
            }
        }
        return walked ? info : nil
    }

    /// A rate info nest's bitrate in kbit/s: the u32 one when sent (rates past 6.5 Gbit/s do not
    /// fit the u16), else the u16; `.some(nil)` when neither is sent or the rate is 0 (unknown);
    /// nil when the nest breaks.
    static func bitrate(_ nest: UnsafeRawBufferPointer) -> Int?? {
        var wide: UInt32?
        var narrow: UInt16?
        guard walk(nest, { type, value in
            switch type {
            case rateBitrate32: wide = u32(value)
            case rateBitrate: if value.count >= 2 { narrow = value.loadUnaligned(as: UInt16.self) }
            default: break
            }
        }) else { return nil }
        let units = wide.map(Int.init) ?? narrow.map(Int.init) ?? 0
        return .some(units > 0 ? units * 100 : nil)
    }

    /// Calls `visit` with each attribute's type (flags cleared) and value; false when an
    /// attribute's length is shorter than its header or runs past `buffer`. Fewer than 4 bytes
    /// left at the end are padding.
    static func walk(_ buffer: UnsafeRawBufferPointer, _ visit: (UInt16, UnsafeRawBufferPointer) -> Void) -> Bool {
        var offset = 0
        while buffer.count - offset >= 4 {
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = buffer.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & attributeTypeMask
            guard length >= 4, length <= buffer.count - offset else { return false }
            visit(type, UnsafeRawBufferPointer(rebasing: buffer[(offset + 4)..<(offset + length)]))
            offset += min(aligned(length), buffer.count - offset)
        }
        return true
    }

    static func u32(_ value: UnsafeRawBufferPointer) -> UInt32? {
        value.count >= 4 ? value.loadUnaligned(as: UInt32.self) : nil
    }

    static func s8(_ value: UnsafeRawBufferPointer) -> Int8? {
        value.isEmpty ? nil : Int8(bitPattern: value[0])
    }

    /// Netlink's 4-byte alignment (NLMSG_ALIGN, NLA_ALIGN).
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }
}
