/// One interface record of an nl80211 interface reply (`NL80211_CMD_NEW_INTERFACE`, the answer
/// to `NL80211_CMD_GET_INTERFACE`): what the station records lack, the network's name and the
/// channel. Each field nil when the kernel did not send it or sent it too short.
public struct NL80211InterfaceInfo: Equatable, Hashable, Sendable {
    /// `NL80211_ATTR_IFINDEX`.
    public var ifindex: Int?
    /// `NL80211_ATTR_IFTYPE` (`NL80211_IFTYPE_STATION` is 2).
    public var interfaceType: UInt32?
    /// `NL80211_ATTR_SSID`: the SSID of the network the interface is connected to, as sent.
    public var ssid: [UInt8]?
    /// `NL80211_ATTR_WIPHY_FREQ`: the operating channel's frequency, MHz.
    public var frequencyMHz: UInt32?

    public init(ifindex: Int? = nil, interfaceType: UInt32? = nil, ssid: [UInt8]? = nil, frequencyMHz: UInt32? = nil) {
        self.ifindex = ifindex; self.interfaceType = interfaceType; self.ssid = ssid; self.frequencyMHz = frequencyMHz
    }
}
