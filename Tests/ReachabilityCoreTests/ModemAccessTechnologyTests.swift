import Foundation
import Testing
@testable import ReachabilityCore

/// One `MM_MODEM_ACCESS_TECHNOLOGY_*` value as ModemManager-enums.h defines it, with the name
/// `mmcli` prints and the generation and status reachd gives it.
struct AccessTechnologyCase: CustomTestStringConvertible, Sendable {
    let mask: UInt32
    let name: String?
    let generation: String?
    let status: NetworkStatus
    var testDescription: String { "0x\(String(mask, radix: 16)) \(name ?? "none")" }
}

/// Every bit of `MMModemAccessTechnology`, with the literal values of ModemManager-enums.h
/// (1.20+: LTE_CAT_M and LTE_NB_IOT are 1 << 16 and 1 << 17), so a wrong constant fails here.
let everyAccessTechnologyBit: [AccessTechnologyCase] = [
    AccessTechnologyCase(mask: 0x0000_0001, name: "pots", generation: nil, status: .wwan),
    AccessTechnologyCase(mask: 0x0000_0002, name: "gsm", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0000_0004, name: "gsm-compact", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0000_0008, name: "gprs", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0000_0010, name: "edge", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0000_0020, name: "umts", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_0040, name: "hsdpa", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_0080, name: "hsupa", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_0100, name: "hspa", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_0200, name: "hspa-plus", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_0400, name: "1xrtt", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0000_0800, name: "evdo0", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_1000, name: "evdoa", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_2000, name: "evdob", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0000_4000, name: "lte", generation: "4G", status: .wwan4G),
    AccessTechnologyCase(mask: 0x0000_8000, name: "5gnr", generation: "5G", status: .wwan5G),
    AccessTechnologyCase(mask: 0x0001_0000, name: "lte-cat-m", generation: "4G", status: .wwan4G),
    AccessTechnologyCase(mask: 0x0002_0000, name: "lte-nb-iot", generation: "4G", status: .wwan4G),
]

/// Masks with several bits, as modems report them.
let combinedAccessTechnologies: [AccessTechnologyCase] = [
    AccessTechnologyCase(mask: 0, name: nil, generation: nil, status: .wwan),
    // 5G NSA: LTE anchor plus NR.
    AccessTechnologyCase(mask: 0x4000 | 0x8000, name: "5gnr", generation: "5G", status: .wwan5G),
    AccessTechnologyCase(mask: 0x0002 | 0x0008 | 0x0010, name: "edge", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0002 | 0x0008, name: "gprs", generation: "2G", status: .wwan2G),
    AccessTechnologyCase(mask: 0x0020 | 0x0040 | 0x0080, name: "hsupa", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0020 | 0x0200, name: "hspa-plus", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0400 | 0x2000, name: "evdob", generation: "3G", status: .wwan3G),
    AccessTechnologyCase(mask: 0x0010 | 0x4000, name: "lte", generation: "4G", status: .wwan4G),
    AccessTechnologyCase(mask: 0x4000 | 0x0001_0000, name: "lte", generation: "4G", status: .wwan4G),
    AccessTechnologyCase(mask: 0x0001_0000 | 0x0002_0000, name: "lte-cat-m", generation: "4G", status: .wwan4G),
    // An analog line beside a radio does not hide the radio.
    AccessTechnologyCase(mask: 0x0001 | 0x0020, name: "umts", generation: "3G", status: .wwan3G),
    // Bits ModemManager may add later are ignored.
    AccessTechnologyCase(mask: 0x0010_0000, name: nil, generation: nil, status: .wwan),
    AccessTechnologyCase(mask: 0x0010_0000 | 0x4000, name: "lte", generation: "4G", status: .wwan4G),
    // MM_MODEM_ACCESS_TECHNOLOGY_ANY.
    AccessTechnologyCase(mask: 0xFFFF_FFFF, name: "5gnr", generation: "5G", status: .wwan5G),
]

@Suite struct ModemAccessTechnologyTests {
    @Test("every bit and combined mask: name, generation, status, cellular object",
          arguments: everyAccessTechnologyBit + combinedAccessTechnologies)
    func classification(_ c: AccessTechnologyCase) {
        let technology = ModemAccessTechnology(rawValue: c.mask)
        #expect(technology.newest?.name == c.name)
        #expect(technology.newest?.generation?.rawValue == c.generation)

        let modem = ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: ["wwan0"],
                               accessTechnologies: c.mask, signalQuality: 55, roaming: false)
        #expect(Classifier.status(forPrimaryKind: .wwan, modem: modem) == c.status)

        // Through the whole classifier: a veth that the modem owns is wwan whatever sysfs said.
        let snapshot = NetworkSnapshot(
            links: [4: LinkState(index: 4, name: "wwan0", kind: .ethernet, up: true, carrier: true, operstate: "up")],
            addresses: [AddressState(ifindex: 4, family: .ipv4, address: "100.64.0.2", prefixLength: 30)],
            routes: [RouteState(family: .ipv4, oif: 4)], modems: [modem])
        let status = Classifier.classify(snapshot, since: Date(timeIntervalSince1970: 0))
        #expect(status.status == c.status)
        #expect(status.primary?.kind == .wwan)
        #expect(status.expensive)
        #expect(status.flags.contains(.isWWAN))
        #expect(status.cellular == Cellular(generation: c.generation, accessTechnology: c.name,
                                            modem: "/org/freedesktop/ModemManager1/Modem/0", interface: "wwan0",
                                            signalQuality: 55, roaming: false))
    }

    @Test func tableCoversEveryBitOnce() {
        let bits = ModemAccessTechnology.table.map(\.bit.rawValue)
        #expect(Set(bits).count == bits.count)
        #expect(Set(bits) == Set(everyAccessTechnologyBit.map(\.mask)))
        for bit in bits { #expect(bit.nonzeroBitCount == 1) }
    }

    @Test func singleBitNamesMatchTheTable() {
        for entry in ModemAccessTechnology.table {
            #expect(entry.bit.newest?.name == entry.name)
        }
    }
}
