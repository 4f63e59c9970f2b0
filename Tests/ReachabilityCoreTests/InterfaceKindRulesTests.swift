import Testing
@testable import ReachabilityCore

struct KindCase: CustomTestStringConvertible, Sendable {
    let name: String
    let facts: InterfaceKindFacts
    var overrides: [Override] = []
    let kind: InterfaceKind
    var testDescription: String { name }

    struct Override: Sendable { let glob: String; let kind: InterfaceKind }
}

let kindCases: [KindCase] = [
    KindCase(name: "physical NIC (no rtnl kind, ARPHRD_ETHER)", facts: InterfaceKindFacts(name: "enp3s0"), kind: .ethernet),
    KindCase(name: "loopback flag", facts: InterfaceKindFacts(name: "lo", arpType: ARPType.loopback, isLoopback: true), kind: .loopback),
    KindCase(name: "veth", facts: InterfaceKindFacts(name: "veth0", rtnlKind: "veth"), kind: .ethernet),
    KindCase(name: "macvlan", facts: InterfaceKindFacts(name: "mv0", rtnlKind: "macvlan"), kind: .ethernet),
    KindCase(name: "bond", facts: InterfaceKindFacts(name: "bond0", rtnlKind: "bond"), kind: .ethernet),
    KindCase(name: "bridge by rtnl kind", facts: InterfaceKindFacts(name: "br0", rtnlKind: "bridge"), kind: .bridge),
    KindCase(name: "bridge by DEVTYPE", facts: InterfaceKindFacts(name: "br0", devtype: "bridge"), kind: .bridge),
    KindCase(name: "tun", facts: InterfaceKindFacts(name: "tun0", rtnlKind: "tun", arpType: ARPType.none), kind: .vpn),
    KindCase(name: "tap marked by tun_flags", facts: InterfaceKindFacts(name: "tap0", hasTunFlags: true), kind: .vpn),
    KindCase(name: "wireguard", facts: InterfaceKindFacts(name: "wg0", rtnlKind: "wireguard", arpType: ARPType.none), kind: .vpn),
    KindCase(name: "ppp by ARPHRD", facts: InterfaceKindFacts(name: "ppp0", arpType: ARPType.ppp), kind: .vpn),
    KindCase(name: "gre", facts: InterfaceKindFacts(name: "gre1", rtnlKind: "gre", arpType: ARPType.ipgre), kind: .vpn),
    KindCase(name: "ipip by ARPHRD_TUNNEL only", facts: InterfaceKindFacts(name: "tunl1", arpType: ARPType.tunnel), kind: .vpn),
    KindCase(name: "vxlan", facts: InterfaceKindFacts(name: "vx0", rtnlKind: "vxlan"), kind: .virtual),
    KindCase(name: "geneve", facts: InterfaceKindFacts(name: "gn0", rtnlKind: "geneve"), kind: .virtual),
    KindCase(name: "Wi-Fi by DEVTYPE=wlan", facts: InterfaceKindFacts(name: "wlp2s0", devtype: "wlan"), kind: .wifi),
    KindCase(name: "Wi-Fi by wireless dir", facts: InterfaceKindFacts(name: "wlan0", hasWireless: true), kind: .wifi),
    KindCase(name: "sysfs wins over rtnl kind (veth marked wlan)", facts: InterfaceKindFacts(name: "eth0", rtnlKind: "veth", devtype: "wlan"), kind: .wifi),
    KindCase(name: "wwan by DEVTYPE", facts: InterfaceKindFacts(name: "wwan0", devtype: "wwan"), kind: .wwan),
    KindCase(name: "raw-IP modem by ARPHRD", facts: InterfaceKindFacts(name: "wwp0s20", arpType: ARPType.rawIP), kind: .wwan),
    KindCase(name: "unknown DEVTYPE falls through", facts: InterfaceKindFacts(name: "x0", rtnlKind: "veth", devtype: "gadget"), kind: .ethernet),
    KindCase(name: "unknown rtnl kind falls to ARPHRD", facts: InterfaceKindFacts(name: "x0", rtnlKind: "newthing"), kind: .ethernet),
    KindCase(name: "nothing known", facts: InterfaceKindFacts(name: "ib0", arpType: 32), kind: .other),
    KindCase(name: "override first", facts: InterfaceKindFacts(name: "wlan0", devtype: "wlan"),
             overrides: [KindCase.Override(glob: "wlan*", kind: .wwan)], kind: .wwan),
    KindCase(name: "first matching override wins", facts: InterfaceKindFacts(name: "usb0"),
             overrides: [KindCase.Override(glob: "eth*", kind: .wifi), KindCase.Override(glob: "usb?", kind: .wwan),
                         KindCase.Override(glob: "*", kind: .ethernet)], kind: .wwan),
    KindCase(name: "non-matching override is ignored", facts: InterfaceKindFacts(name: "tun0", rtnlKind: "tun"),
             overrides: [KindCase.Override(glob: "wg*", kind: .ethernet)], kind: .vpn),
]

@Suite struct InterfaceKindRulesTests {
    @Test(arguments: kindCases)
    func decides(_ c: KindCase) {
        #expect(InterfaceKindRules.kind(for: c.facts, overrides: c.overrides.map { ReachdConfiguration.KindOverride(glob: $0.glob, kind: $0.kind) }) == c.kind)
    }

    @Test func everyKindIsReachable() {
        #expect(Set(kindCases.map(\.kind)) == Set(InterfaceKind.allCases))
    }
}

@Suite struct GlobTests {
    @Test(arguments: [
        ("eth0", "eth0", true), ("eth*", "eth0", true), ("eth*", "eth", true), ("eth*", "wlan0", false),
        ("*", "", true), ("?", "", false), ("wl?n0", "wlan0", true), ("*0", "wlan0", true), ("*0", "wlan1", false),
        ("*an*", "wlan0", true), ("w*n*1", "wlan0", false), ("wlan[0-9]", "wlan7", true), ("wlan[0-9]", "wlanx", false),
        ("wlan[!0-9]", "wlanx", true), ("wlan[^0-9]", "wlan1", false), ("[ew]*", "wwan0", true), ("[]]", "]", true),
        ("a\\*", "a*", true), ("a\\*", "ab", false), ("br[0", "br[0", true), ("**x", "abx", true), ("eth0", "eth00", false),
    ])
    func matches(_ pattern: String, _ name: String, _ expected: Bool) {
        #expect(Glob(pattern).matches(name) == expected)
    }

    @Test func matchesAny() {
        #expect(Glob.matchesAny(["wwan*", "usb*"], "usb0"))
        #expect(!Glob.matchesAny([], "usb0"))
    }
}
