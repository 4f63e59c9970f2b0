import Foundation
import ReachabilityCore
import ReachabilityLinux
import TestSupport
import Testing

/// Everything a source reported, in order.
final class ModemRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _reports: [[ModemState]] = []
    private var _logs: [String] = []
    var reports: [[ModemState]] { lock.withLock { _reports } }
    var logs: [String] { lock.withLock { _logs } }
    func record(_ modems: [ModemState]) { lock.withLock { _reports.append(modems) } }
    func log(_ line: String) { lock.withLock { _logs.append(line) } }
}

private let modem0 = "/org/freedesktop/ModemManager1/Modem/0"
private let modem1 = "/org/freedesktop/ModemManager1/Modem/1"
private let lte = ModemAccessTechnology.lte.rawValue
private let nr = ModemAccessTechnology.fiveGNR.rawValue
private let gsmGprsEdge = ModemAccessTechnology([.gsm, .gprs, .edge]).rawValue

private func makeSource(_ bus: PrivateBus?, address: String? = nil, recorder: ModemRecorder) -> ModemManagerSource {
    ModemManagerSource(queue: DispatchQueue(label: "test.modems"), busAddress: address ?? bus?.address,
                       log: LogSink(threshold: .debug) { _, line in recorder.log(line) }, onChange: { recorder.record($0) })
}

/// What the classifier makes of the source's modems with the net port `name` as the only,
/// default-routed link, which sysfs calls plain ethernet (a veth here).
private func classify(_ modems: [ModemState], interface name: String = "veth-mm0") -> Status {
    let snapshot = NetworkSnapshot(
        links: [7: LinkState(index: 7, name: name, kind: .ethernet, up: true, carrier: true, operstate: "up")],
        addresses: [AddressState(ifindex: 7, family: .ipv4, address: "100.64.0.2", prefixLength: 30)],
        routes: [RouteState(family: .ipv4, gateway: "100.64.0.1", oif: 7)], modems: modems)
    return Classifier.classify(snapshot, since: Date(timeIntervalSince1970: 0))
}

extension SystemTests {
@Suite(.serialized) struct ModemManagerSourceTests {
    /// Any peer can send a signal that looks like the bus's NameOwnerChanged (addressed to
    /// reachd, no match rule filters it): it changes nothing, and ModemManager's own signals
    /// are still followed afterwards.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func forgedNameOwnerChangedChangesNothing() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte, registration: 1)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        let lteModem = ModemState(path: modem0, interfaces: ["veth-mm0"], accessTechnologies: lte, signalQuality: 71, roaming: false)
        #expect(waitUntil(timeout: 10) { source.modems == [lteModem] })
        let reportsBefore = recorder.reports.count

        let sent = try sh("\(Binaries.python) \(Paths.packageRoot)/Tests/python/forge_signal.py '\(bus.address)' modemmanager-vanished")
        #expect((Int(sent.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 2, "\(sent.output)")
        #expect(waitUntil(timeout: 10) { recorder.logs.contains { $0.contains("ignoring NameOwnerChanged from :") } }, "\(recorder.logs)")
        #expect(source.modems == [lteModem])
        #expect(classify(source.modems).status == .wwan4G)
        #expect(recorder.reports.count == reportsBefore)

        // The real ModemManager is still believed.
        try mm.setAccessTechnologies(0, lte | nr)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == lte | nr })
        #expect(classify(source.modems).status == .wwan5G)
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func technologyChangesFollowThroughToTheStatus() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte, registration: 1)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(source.isConnected)

        let lteModem = ModemState(path: modem0, interfaces: ["veth-mm0"], accessTechnologies: lte, signalQuality: 71, roaming: false)
        #expect(waitUntil(timeout: 10) { source.modems == [lteModem] })
        #expect(classify(source.modems).status == .wwan4G)
        #expect(classify(source.modems).primary?.kind == .wwan)
        #expect(classify(source.modems).cellular?.accessTechnology == "lte")

        // 5G NSA: LTE anchor plus NR.
        try mm.setAccessTechnologies(0, lte | nr)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == lte | nr })
        #expect(classify(source.modems).status == .wwan5G)
        #expect(classify(source.modems).cellular?.accessTechnology == "5gnr")

        try mm.setAccessTechnologies(0, gsmGprsEdge)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == gsmGprsEdge })
        #expect(classify(source.modems).status == .wwan2G)
        #expect(classify(source.modems).cellular?.accessTechnology == "edge")
        #expect(classify(source.modems).cellular?.generation == "2G")

        try mm.control("SetRegistrationState", "0", "5")
        #expect(waitUntil(timeout: 10) { source.modems.first?.roaming == true })
        try mm.control("SetModemProperty", "0", "SignalQuality", "q:33")
        #expect(waitUntil(timeout: 10) { source.modems.first?.signalQuality == 33 })
        #expect(classify(source.modems).cellular?.roaming == true)
        #expect(classify(source.modems).cellular?.signalQuality == 33)

        // One report per change, none repeated.
        let reports = recorder.reports
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func modemsComeAndGoWithTheirBearers() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()

        // A modem without a net port whose data goes through a PPP bearer.
        try mm.addModem(1, netPort: "", access: ModemAccessTechnology.umts.rawValue, registration: 0xFFFF_FFFF)
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem1] })
        #expect(source.modems.first?.interfaces == [])
        #expect(source.modems.first?.roaming == nil)
        try mm.control("AddBearer", "1", "4", "ppp0", "1")
        #expect(waitUntil(timeout: 10) { source.modems.first?.interfaces == ["ppp0"] })
        #expect(classify(source.modems, interface: "ppp0").status == .wwan3G)
        try mm.control("SetBearer", "4", "''", "0")
        #expect(waitUntil(timeout: 10) { source.modems.first?.interfaces == [] })

        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0, modem1] })

        // Removed: the interface is no longer the modem's, and falls back to its sysfs kind.
        try mm.control("RemoveModem", "0")
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem1] })
        #expect(classify(source.modems).status == .ethernet)
        #expect(classify(source.modems).cellular == nil)
        try mm.control("RemoveModem", "1")
        #expect(waitUntil(timeout: 10) { source.modems.isEmpty })
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func modemManagerCrashAndRestart() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0] })

        mm.kill()
        #expect(waitUntil(timeout: 10) { source.modems.isEmpty })
        #expect(classify(source.modems).status == .ethernet)
        #expect(source.isConnected)

        // Back, with a different modem: nothing of the old one survives.
        try mm.start()
        try mm.addModem(1, netPort: "wwan1", access: nr | lte)
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem1] })
        #expect(source.modems.first?.interfaces == ["wwan1"])

        // Restarted again with modems already present at start: read by GetManagedObjects.
        mm.kill()
        #expect(waitUntil(timeout: 10) { source.modems.isEmpty })
        try mm.start()
        try mm.addModem(0, netPort: "veth-mm0", access: gsmGprsEdge)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == gsmGprsEdge })
        #expect(recorder.logs.contains { $0.contains("left the bus") })
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func modemManagerAbsentAtStart() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus, start: false)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(source.isConnected)
        #expect(waitUntil(timeout: 10) { recorder.logs.contains { $0.contains("not running") } })
        #expect(source.modems.isEmpty)

        try mm.start()
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0] })
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func garbageAnswersAreSurvived() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus, garbage: true)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(waitUntil(timeout: 10) { recorder.logs.contains { $0.contains("not a{oa{sa{sv}}}") } })
        #expect(source.modems.isEmpty)

        // Well-formed signals after a garbage reply still count…
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0] })
        // …and a property of the wrong type reads as unknown rather than stopping anything.
        try mm.control("SetModemProperty", "0", "AccessTechnologies", "s:lte")
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == 0 })
        #expect(classify(source.modems).status == .wwan)
        try mm.control("SetModemProperty", "0", "AccessTechnologies", "i:16384")
        try mm.setAccessTechnologies(0, nr | lte)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == nr | lte })
    }

    /// ModemManager 1.20: the source asks for threshold reports, the figures arrive as
    /// PropertiesChanged of Modem.Signal, and each change reaches `onChange` (the monitor's
    /// modemsChanged path) as `ModemState.signal`.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func radioSignalFollowsModemSignal() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(waitUntil(timeout: 10) { (try? mm.signalSetupCalls(0)) == ["SetupThresholds rssi-threshold=5"] },
                "\((try? mm.signalSetupCalls(0)) ?? [])")
        // Nothing reported yet: the modem has no signal, and is otherwise as before.
        let lteModem = ModemState(path: modem0, interfaces: ["veth-mm0"], accessTechnologies: lte, signalQuality: 71, roaming: false)
        #expect(source.modems == [lteModem])

        try mm.setSignal(0, "Lte", ["rsrp": -125, "rsrq": -16, "snr": -2, "rssi": -90])
        let weak = RadioSignal(technology: "lte", rssi: -90, rsrp: -125, rsrq: -16, snr: -2, level: 0)
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal == weak }, "\(source.modems)")
        #expect(recorder.reports.last?.first?.signal == weak)

        // A change of RSRP arrives as a new report; so does NaN, which reads as not reported.
        try mm.setSignal(0, "Lte", ["rsrp": -96, "rsrq": -11, "snr": 8, "rssi": -70])
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal?.rsrp == -96 })
        #expect(source.modems.first?.signal?.level == 2)
        try mm.setSignal(0, "Lte", ["rsrp": .nan, "rssi": -100])
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal == RadioSignal(technology: "lte", rssi: -100, level: 2) })

        // 5G NSA: NR reports beside LTE and is the newer technology.
        try mm.setSignal(0, "Nr5g", ["rsrp": -70])
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal?.technology == "nr5g" })
        #expect(source.modems.first?.signal?.level == 3)
        // Everything cleared: no signal, the rest of the modem unchanged.
        try mm.setSignal(0, "Nr5g", [:])
        try mm.setSignal(0, "Lte", [:])
        #expect(waitUntil(timeout: 10) { source.modems == [lteModem] })
        let reports = recorder.reports
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 != $1 })
        // Asked once, however many changes followed.
        #expect(try mm.signalSetupCalls(0) == ["SetupThresholds rssi-threshold=5"])

        // A restarted ModemManager forgot the setting: it is asked again.
        mm.kill()
        #expect(waitUntil(timeout: 10) { source.modems.isEmpty })
        try mm.start()
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        #expect(waitUntil(timeout: 10) { (try? mm.signalSetupCalls(0)) == ["SetupThresholds rssi-threshold=5"] })
        try mm.setSignal(0, "Lte", ["rsrp": -125])
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal == RadioSignal(technology: "lte", rsrp: -125, level: 0) })
    }

    /// Before ModemManager 1.20 there is no SetupThresholds: the source asks for a reading every 30 s.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func withoutSetupThresholdsTheSignalIsPolled() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus, setupThresholds: false)
        try mm.addModem(0, netPort: "veth-mm0", access: gsmGprsEdge)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(waitUntil(timeout: 10) { (try? mm.signalSetupCalls(0)) == ["Setup 30"] }, "\((try? mm.signalSetupCalls(0)) ?? [])")
        #expect(recorder.logs.contains { $0.contains("cannot report its signal by threshold") && $0.contains("UnknownMethod") },
                "\(recorder.logs)")
        try mm.setSignal(0, "Gsm", ["rssi": -99])
        #expect(waitUntil(timeout: 10) { source.modems.first?.signal == RadioSignal(technology: "gsm", rssi: -99, level: 2) })
        #expect(classify(source.modems).status == .wwan2G)
    }

    /// A modem without Modem.Signal is the modem it always was: no call, no signal, nothing else.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func aModemWithoutTheSignalInterfaceIsUnchanged() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus, signalInterface: false)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        #expect(source.start(waitingUpTo: 10))
        let lteModem = ModemState(path: modem0, interfaces: ["veth-mm0"], accessTechnologies: lte, signalQuality: 71, roaming: false)
        #expect(source.modems == [lteModem])
        try mm.setAccessTechnologies(0, lte | nr)
        #expect(waitUntil(timeout: 10) { source.modems.first?.accessTechnologies == lte | nr })
        #expect(try mm.signalSetupCalls(0) == [])
        #expect(source.modems.first?.signal == nil)
        #expect(recorder.logs.allSatisfy { !$0.contains("signal") }, "\(recorder.logs)")
    }

    /// No bus: said once (with why), no modems, nothing reported; a second start changes
    /// nothing, and the bus is retried quietly.
    @Test func noBusLeavesTheSourceInert() throws {
        let recorder = ModemRecorder()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("reachd-no-bus-\(UUID().uuidString)").path
        let source = makeSource(nil, address: "unix:path=\(missing)", recorder: recorder)
        source.start()
        source.start()
        #expect(!source.isConnected)
        #expect(source.modems.isEmpty)
        #expect(recorder.reports.isEmpty)
        #expect(recorder.logs.count == 1, "\(recorder.logs)")
        #expect(recorder.logs.first?.contains("no D-Bus system bus") == true)
        #expect(recorder.logs.first?.contains("sd_bus_start") == true)
        source.stop()
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func startCanWaitForTheFirstAnswer() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        // With a bearer to read as well: reported together, before start returns.
        try mm.control("AddBearer", "0", "0", "wwan0", "1")
        #expect(source.start(waitingUpTo: 10))
        #expect(source.modems.first?.interfaces == ["veth-mm0", "wwan0"])
        #expect(recorder.reports.count == 1)

        // ModemManager absent: the answer is "not running", no modems, and no wait.
        mm.kill()
        let lonely = makeSource(bus, recorder: ModemRecorder())
        defer { lonely.stop() }
        #expect(lonely.start(waitingUpTo: 10))
        #expect(lonely.isConnected)
        #expect(lonely.modems.isEmpty)

        // No bus: nothing to wait for.
        let inert = makeSource(nil, address: "unix:path=/nonexistent/reachd-bus", recorder: ModemRecorder())
        #expect(inert.start(waitingUpTo: 10))
        #expect(!inert.isConnected)
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func busGoingAwayClearsTheModems() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        defer { source.stop() }
        source.start()
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0] })

        bus.stop()
        #expect(waitUntil(timeout: 10) { !source.isConnected })
        #expect(source.modems.isEmpty)
        #expect(recorder.reports.last == [])
        #expect(recorder.logs.contains { $0.contains("lost the D-Bus connection") })
        mm.kill()
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func stoppedSourceReportsNothingMore() throws {
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "veth-mm0", access: lte)
        let recorder = ModemRecorder()
        let source = makeSource(bus, recorder: recorder)
        source.start()
        #expect(waitUntil(timeout: 10) { source.modems.map(\.path) == [modem0] })
        source.stop()
        #expect(!source.isConnected)
        // Stopping forgets the modems (a monitor fed by it must not keep stale ones)…
        #expect(source.modems.isEmpty)
        #expect(recorder.reports.last == [])
        let count = recorder.reports.count
        try mm.setAccessTechnologies(0, nr | lte)
        try mm.control("RemoveModem", "0")
        // …and then reports nothing. A second source on the same bus sees changes, so they are sent.
        let witness = makeSource(bus, recorder: ModemRecorder())
        defer { witness.stop() }
        witness.start()
        #expect(waitUntil(timeout: 10) { witness.isConnected })
        try mm.addModem(1, netPort: "wwan1", access: lte)
        #expect(waitUntil(timeout: 10) { witness.modems.map(\.path) == [modem1] })
        #expect(recorder.reports.count == count)
    }
}
}
