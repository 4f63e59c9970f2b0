import Testing
@testable import ReachabilityCore

// Builders for the D-Bus values ModemManager sends.
private func props(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue {
    .array(pairs.map { .dictEntry(.string($0.key), .variant($0.value)) })
}
private func interfaces(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue {
    .array(pairs.map { .dictEntry(.string($0.key), $0.value) })
}
private func managedObjects(_ pairs: KeyValuePairs<String, DBusValue>) -> [DBusValue] {
    [.array(pairs.map { .dictEntry(.objectPath($0.key), $0.value) })]
}
private func ports(_ list: [(String, UInt32)]) -> DBusValue {
    .array(list.map { .structure([.string($0.0), .uint32($0.1)]) })
}
private func signal(_ quality: UInt32) -> DBusValue { .structure([.uint32(quality), .bool(true)]) }
private func paths(_ list: [String]) -> DBusValue { .array(list.map { .objectPath($0) }) }

private let modem0 = "/org/freedesktop/ModemManager1/Modem/0"
private let bearer0 = "/org/freedesktop/ModemManager1/Bearer/0"
private let modemIface = ModemManagerDBus.modemInterface
private let gppIface = ModemManagerDBus.modem3gppInterface
private let lte: UInt32 = 1 << 14

private func modemProperties(access: UInt32 = lte, ports portList: [(String, UInt32)] = [("wwan0", 2), ("cdc-wdm0", 6)],
                             bearers: [String] = [], quality: UInt32 = 71) -> DBusValue {
    props(["State": .int32(8), "AccessTechnologies": .uint32(access), "SignalQuality": signal(quality),
           "Ports": ports(portList), "Bearers": paths(bearers)])
}

private func model(_ objects: [DBusValue]) -> ModemManagerModel {
    var model = ModemManagerModel()
    expectTrue(model.apply(managedObjects: objects))
    return model
}

@Suite struct ModemManagerModelTests {
    @Test func managedObjectsGiveTheModemWithItsNetPort() {
        let m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(),
                                                          gppIface: props(["RegistrationState": .uint32(1)])])]))
        #expect(m.modems == [ModemState(path: modem0, interfaces: ["wwan0"], accessTechnologies: lte,
                                        signalQuality: 71, roaming: false)])
        #expect(m.unknownBearers.isEmpty)
    }

    @Test("3GPP registration state → roaming", arguments: [
        (UInt32(0), false), (1, false), (2, false), (3, false), (4, false), (5, true), (6, false), (7, true),
        (8, false), (9, false), (10, true), (11, false),
    ])
    func roaming(state: UInt32, roaming: Bool) {
        let m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(),
                                                          gppIface: props(["RegistrationState": .uint32(state)])])]))
        #expect(m.modems.first?.roaming == roaming)
    }

    @Test func roamingUnknownWithoutRegistrationInterfaces() {
        let m = model(managedObjects([modem0: interfaces([modemIface: modemProperties()])]))
        #expect(m.modems.first?.roaming == nil)
    }

    @Test func cdmaRoaming() {
        let cdma = props(["Cdma1xRegistrationState": .uint32(2), "EvdoRegistrationState": .uint32(3)])
        let m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(), ModemManagerDBus.modemCdmaInterface: cdma])]))
        #expect(m.modems.first?.roaming == true)
    }

    @Test func bearerInterfaceBelongsToTheModemWhileConnected() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(ports: [("ttyUSB0", 3)], bearers: [bearer0])])]))
        #expect(m.unknownBearers == [bearer0])
        #expect(m.modems.first?.interfaces == [])

        m.apply(bearer: bearer0, getAllReply: [props(["Interface": .string("ppp0"), "Connected": .bool(true)])])
        #expect(m.unknownBearers.isEmpty)
        #expect(m.modems.first?.interfaces == ["ppp0"])

        expectTrue(m.apply(signal: "PropertiesChanged", path: bearer0,
                        arguments: [.string(ModemManagerDBus.bearerInterface), props(["Connected": .bool(false)]), .array([])]))
        #expect(m.modems.first?.interfaces == [])

        expectTrue(m.apply(signal: "PropertiesChanged", path: bearer0,
                        arguments: [.string(ModemManagerDBus.bearerInterface), props(["Connected": .bool(true), "Interface": .string("wwan1")]), .array([])]))
        #expect(m.modems.first?.interfaces == ["wwan1"])
    }

    @Test func netPortAndBearerInterfaceAreNotListedTwice() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(bearers: [bearer0])])]))
        m.apply(bearer: bearer0, getAllReply: [props(["Interface": .string("wwan0"), "Connected": .bool(true)])])
        #expect(m.modems.first?.interfaces == ["wwan0"])
    }

    @Test func failedBearerReadIsNotAskedAgain() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(bearers: [bearer0])])]))
        m.apply(bearer: bearer0, getAllReply: nil)
        #expect(m.unknownBearers.isEmpty)
        #expect(m.modems.first?.interfaces == ["wwan0"])
    }

    @Test func newBearerInModemPropertiesIsAskedFor() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties()])]))
        expectTrue(m.apply(signal: "PropertiesChanged", path: modem0,
                        arguments: [.string(modemIface), props(["Bearers": paths([bearer0])]), .array([])]))
        #expect(m.unknownBearers == [bearer0])
        m.apply(bearer: bearer0, getAllReply: [props(["Interface": .string("wwan0"), "Connected": .bool(true)])])
        // Dropping the bearer from the modem forgets it.
        expectTrue(m.apply(signal: "PropertiesChanged", path: modem0,
                        arguments: [.string(modemIface), props(["Bearers": paths([])]), .array([])]))
        #expect(m.bearers.isEmpty)
    }

    @Test func propertiesChangedUpdatesAndInvalidates() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties()])]))
        expectTrue(m.apply(signal: "PropertiesChanged", path: modem0,
                        arguments: [.string(modemIface), props(["AccessTechnologies": .uint32(lte | 1 << 15)]), .array([])]))
        #expect(m.modems.first?.accessTechnologies == lte | 1 << 15)
        expectTrue(m.apply(signal: "PropertiesChanged", path: modem0,
                        arguments: [.string(modemIface), props([:]), .array([.string("SignalQuality")])]))
        #expect(m.modems.first?.signalQuality == nil)
    }

    @Test func interfacesAddedAndRemoved() {
        var m = model(managedObjects([:]))
        #expect(m.modems.isEmpty)
        expectTrue(m.apply(signal: "InterfacesAdded", path: ModemManagerDBus.path,
                        arguments: [.objectPath(modem0), interfaces([modemIface: modemProperties(), gppIface: props(["RegistrationState": .uint32(5)])])]))
        #expect(m.modems == [ModemState(path: modem0, interfaces: ["wwan0"], accessTechnologies: lte, signalQuality: 71, roaming: true)])
        expectTrue(m.apply(signal: "InterfacesRemoved", path: ModemManagerDBus.path,
                        arguments: [.objectPath(modem0), .array([.string(gppIface)])]))
        #expect(m.modems.first?.roaming == nil)
        expectTrue(m.apply(signal: "InterfacesRemoved", path: ModemManagerDBus.path,
                        arguments: [.objectPath(modem0), .array([.string(modemIface)])]))
        #expect(m.modems.isEmpty)
        #expect(m.objects.isEmpty)
    }

    @Test func modemsInModemManagerOrderAndOtherObjectsIgnored() {
        let m = model(managedObjects([
            "/org/freedesktop/ModemManager1/Modem/10": interfaces([modemIface: modemProperties(ports: [("wwan10", 2)])]),
            "/org/freedesktop/ModemManager1/Modem/2": interfaces([modemIface: modemProperties(ports: [("wwan2", 2)])]),
            "/org/freedesktop/ModemManager1/SIM/0": interfaces(["org.freedesktop.ModemManager1.Sim": props(["Imsi": .string("001")])]),
        ]))
        #expect(m.modems.map(\.path) == ["/org/freedesktop/ModemManager1/Modem/2", "/org/freedesktop/ModemManager1/Modem/10"])
    }

    @Test func wrongShapesAreRejectedOrIgnored() {
        var m = ModemManagerModel()
        expectFalse(m.apply(managedObjects: [.string("not a managed object tree")]))
        expectFalse(m.apply(managedObjects: []))
        expectFalse(m.apply(managedObjects: [.array([.dictEntry(.objectPath(modem0), .uint32(1))])]))
        #expect(m.modems.isEmpty)

        // Wrong property types read as absent; the modem itself still counts (its interfaces are wwan).
        expectTrue(m.apply(managedObjects: managedObjects([modem0: interfaces([modemIface: props([
            "AccessTechnologies": .string("lte"), "SignalQuality": .uint32(3), "Ports": .string("wwan0"),
            "Bearers": .string("nope")]), gppIface: props(["RegistrationState": .int32(5)])])])))
        #expect(m.modems == [ModemState(path: modem0, interfaces: [], accessTechnologies: 0, signalQuality: nil, roaming: nil)])

        let before = m
        expectFalse(m.apply(signal: "InterfacesAdded", path: ModemManagerDBus.path, arguments: [.string(modem0)]))
        expectFalse(m.apply(signal: "InterfacesRemoved", path: ModemManagerDBus.path, arguments: [.objectPath(modem0), .array([.uint32(1)])]))
        expectFalse(m.apply(signal: "PropertiesChanged", path: modem0, arguments: [.string(modemIface), .string("x"), .array([])]))
        expectFalse(m.apply(signal: "Frobnicated", path: modem0, arguments: []))
        #expect(m == before)

        // A port entry with the wrong field types is skipped, the good one kept.
        expectTrue(m.apply(signal: "PropertiesChanged", path: modem0, arguments: [.string(modemIface), props([
            "Ports": .array([.structure([.uint32(2), .string("x")]), .structure([.string("wwan0"), .uint32(2)])])]), .array([])]))
        #expect(m.modems.first?.interfaces == ["wwan0"])
    }

    @Test func resetForgetsEverything() {
        var m = model(managedObjects([modem0: interfaces([modemIface: modemProperties(bearers: [bearer0])])]))
        m.apply(bearer: bearer0, getAllReply: [props(["Interface": .string("wwan0")])])
        m.reset()
        #expect(m.modems.isEmpty)
        #expect(m.bearers.isEmpty)
    }
}

/// `#expect` cannot take a mutating call; these can.
private func expectTrue(_ value: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value, sourceLocation: sourceLocation)
}
private func expectFalse(_ value: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!value, sourceLocation: sourceLocation)
}
