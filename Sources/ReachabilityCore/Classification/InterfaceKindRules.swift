/// What the kernel and sysfs say about one link, gathered by the netlink source; the input of
/// `InterfaceKindRules.kind(for:overrides:)`.
public struct InterfaceKindFacts: Equatable, Sendable {
    public var name: String
    /// The rtnl link kind (`IFLA_INFO_KIND`: `veth`, `bridge`, `tun`, `vxlan`, …); nil for physical NICs.
    public var rtnlKind: String?
    /// The hardware type (`ARPHRD_*`, `ifi_type`).
    public var arpType: Int
    /// IFF_LOOPBACK.
    public var isLoopback: Bool
    /// `DEVTYPE=` of `class/net/NAME/uevent` (`wlan`, `wwan`, `bridge`, …).
    public var devtype: String?
    /// `class/net/NAME/wireless` or `class/net/NAME/phy80211` exists.
    public var hasWireless: Bool
    /// `class/net/NAME/tun_flags` exists (a tun/tap device).
    public var hasTunFlags: Bool

    public init(name: String, rtnlKind: String? = nil, arpType: Int = ARPType.ether, isLoopback: Bool = false,
                devtype: String? = nil, hasWireless: Bool = false, hasTunFlags: Bool = false) {
        self.name = name; self.rtnlKind = rtnlKind; self.arpType = arpType; self.isLoopback = isLoopback
        self.devtype = devtype; self.hasWireless = hasWireless; self.hasTunFlags = hasTunFlags
    }
}

/// The `ARPHRD_*` values the rules look at (linux/if_arp.h), so Core needs no C header.
public enum ARPType {
    public static let ether = 1
    public static let ppp = 512
    public static let tunnel = 768
    public static let tunnel6 = 769
    public static let loopback = 772
    public static let sit = 776
    public static let ipgre = 778
    public static let ieee80211 = 801
    public static let ieee80211Prism = 802
    public static let ieee80211Radiotap = 803
    public static let ip6gre = 823
    /// qmi_wwan / rmnet in raw-IP mode: a cellular modem.
    public static let rawIP = 519
    public static let none = 0xFFFE
}

/// Decides an interface's kind, most specific evidence first (systemd-networkd style string
/// tables): configured overrides by name glob, loopback, sysfs (`DEVTYPE`, `wireless`/`phy80211`,
/// `tun_flags`), the rtnl link kind, and last the ARPHRD hardware type.
public enum InterfaceKindRules {
    /// `DEVTYPE=` values of `uevent`.
    public static let devtypes: [String: InterfaceKind] = [
        "wlan": .wifi, "wwan": .wwan, "bridge": .bridge, "bond": .ethernet, "vlan": .ethernet,
        "ppp": .vpn, "wireguard": .vpn, "vxlan": .virtual, "geneve": .virtual,
    ]

    /// rtnl link kinds (`ip -d link` shows them).
    public static let rtnlKinds: [String: InterfaceKind] = [
        "veth": .ethernet, "macvlan": .ethernet, "macvtap": .ethernet, "ipvlan": .ethernet, "ipvtap": .ethernet,
        "bond": .ethernet, "team": .ethernet, "vlan": .ethernet,
        "bridge": .bridge,
        "tun": .vpn, "wireguard": .vpn, "ppp": .vpn, "ipip": .vpn, "gre": .vpn, "gretap": .vpn,
        "ip6gre": .vpn, "ip6gretap": .vpn, "ip6tnl": .vpn, "sit": .vpn, "vti": .vpn, "vti6": .vpn,
        "xfrm": .vpn, "erspan": .vpn, "ip6erspan": .vpn,
        "vxlan": .virtual, "geneve": .virtual, "dummy": .virtual, "ifb": .virtual, "vrf": .virtual,
        "nlmon": .virtual, "bareudp": .virtual, "netdevsim": .virtual, "macsec": .virtual, "gtp": .virtual,
        "wwan": .wwan, "rmnet": .wwan,
    ]

    /// Hardware types.
    public static func kind(forARPType type: Int) -> InterfaceKind? {
        switch type {
        case ARPType.ether: return .ethernet
        case ARPType.loopback: return .loopback
        case ARPType.ppp, ARPType.none, ARPType.tunnel, ARPType.tunnel6, ARPType.sit, ARPType.ipgre, ARPType.ip6gre: return .vpn
        case ARPType.ieee80211, ARPType.ieee80211Prism, ARPType.ieee80211Radiotap: return .wifi
        case ARPType.rawIP: return .wwan
        default: return nil
        }
    }

    /// The kind of the link described by `facts`; `overrides` are `[Interfaces] Kind.GLOB=` lines, first match wins.
    public static func kind(for facts: InterfaceKindFacts, overrides: [ReachdConfiguration.KindOverride] = []) -> InterfaceKind {
        if let forced = overrides.first(where: { Glob($0.glob).matches(facts.name) }) { return forced.kind }
        if facts.isLoopback || facts.arpType == ARPType.loopback { return .loopback }
        if let devtype = facts.devtype, let kind = devtypes[devtype] { return kind }
        if facts.hasWireless { return .wifi }
        if facts.hasTunFlags { return .vpn }
        if let rtnlKind = facts.rtnlKind, let kind = rtnlKinds[rtnlKind] { return kind }
        return kind(forARPType: facts.arpType) ?? .other
    }
}
