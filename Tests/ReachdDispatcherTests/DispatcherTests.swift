import Foundation
import Testing
@testable import reachd_dispatcher
import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func status(_ kind: NetworkStatus = .ethernet, connectivity: Connectivity = .full, expensive: Bool = false,
                    interface: String = "eth0", portal: String? = nil) -> Status {
    guard kind != .notReachable else { return Status.initial(since: t0) }
    let primary = Interface(name: interface, index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                            addresses: ["10.0.0.2/24"], metered: expensive)
    let probe = connectivity == .unknown ? nil
        : Probe(url: "http://10.0.0.1/generate_204", result: connectivity, portalUrl: portal, checkedAt: t0)
    return Status(status: kind, reachable: true, connectivity: connectivity, primary: primary, vpn: nil, cellular: nil,
                  expensive: expensive, ipv4: true, ipv6: false, gateways: ["10.0.0.1"], flags: [.reachable],
                  interfaces: [primary], probe: probe, since: t0)
}

/// `status` as a daemon with `[Connectivity] Enabled=no` reports it: connectivity unknown for good.
private func unchecked(_ kind: NetworkStatus) -> Status {
    var s = status(kind, connectivity: kind == .notReachable ? .none : .unknown)
    s.connectivityCheck = false
    return s
}

private func event(_ sequence: Int, from previous: Status?, to current: Status, reason: Reason.Code = .probeResult) -> ReachabilityEvent {
    ReachabilityEvent(sequence: sequence, timestamp: t0, event: previous == nil ? .initial : .reachabilityChanged,
                      reason: Reason(code: previous == nil ? .initial : reason), previous: previous, current: current)
}

@Suite struct NetworkTargetTests {
    @Test(arguments: [
        (status(.notReachable), false, false, false),
        (status(.ethernet, connectivity: .unknown), true, false, true),
        (status(.ethernet, connectivity: .portal), true, false, true),
        (status(.ethernet, connectivity: .limited), true, false, true),
        (status(.ethernet, connectivity: .full), true, true, true),
        (status(.wwan4G, connectivity: .full, expensive: true), true, true, false),
        (status(.wifi, connectivity: .portal, expensive: true), true, false, false),
        // The check off: a reachable path is online, as NetworkManager counts it.
        (unchecked(.ethernet), true, true, true),
        (unchecked(.notReachable), false, false, false),
    ])
    func conditions(_ s: Status, _ online: Bool, _ internet: Bool, _ unmetered: Bool) {
        #expect(NetworkTarget.online.holds(in: s) == online)
        #expect(NetworkTarget.internet.holds(in: s) == internet)
        #expect(NetworkTarget.unmetered.holds(in: s) == unmetered)
    }

    @Test func unitNames() {
        #expect(NetworkTarget.allCases.map(\.unitName) == ["reachd-online.target", "reachd-internet.target", "reachd-unmetered.target"])
    }
}

@Suite struct TargetHoldTests {
    /// A step: at time `at`, either the condition as an event says (`observe`) or the wake-up
    /// (`wake`), and the action expected.
    enum Step { case observe(Double, Bool, TargetHold.Action), wake(Double, TargetHold.Action) }

    static let cases: [(String, Double, [Step])] = [
        ("first decision waits for the hold", 3, [.observe(0, true, .wake(at: 3)), .wake(3, .apply(true))]),
        ("an early wake asks again", 3, [.observe(0, true, .wake(at: 3)), .wake(1, .wake(at: 3)), .wake(3.5, .apply(true))]),
        ("a flap shorter than the hold does nothing", 3, [
            .observe(0, true, .wake(at: 3)), .wake(3, .apply(true)),
            .observe(10, false, .wake(at: 13)), .observe(11, true, .none), .wake(13, .none)]),
        ("a change that holds stops", 3, [
            .observe(0, true, .wake(at: 3)), .wake(3, .apply(true)),
            .observe(10, false, .wake(at: 13)), .wake(13, .apply(false))]),
        ("the same condition again keeps its first time", 3, [
            .observe(0, false, .wake(at: 3)), .observe(2, false, .wake(at: 3)), .wake(3, .apply(false))]),
        ("flapping back and forth restarts the hold", 2, [
            .observe(0, true, .wake(at: 2)), .wake(2, .apply(true)),
            .observe(5, false, .wake(at: 7)), .observe(6, true, .none), .observe(6.5, false, .wake(at: 8.5)),
            .wake(7, .wake(at: 8.5)), .wake(8.5, .apply(false))]),
        ("no hold applies at once", 0, [.observe(0, true, .apply(true)), .observe(1, true, .none), .observe(2, false, .apply(false))]),
        ("a wake with nothing pending is nothing", 3, [.wake(5, .none)]),
    ]

    @Test(arguments: cases)
    func sequence(_ name: String, _ hold: Double, _ steps: [Step]) {
        var machine = TargetHold(holdSeconds: hold)
        for (index, step) in steps.enumerated() {
            switch step {
            case .observe(let now, let holds, let expected):
                #expect(machine.observe(holds, now: now) == expected, "\(name): step \(index)")
            case .wake(let now, let expected):
                #expect(machine.deadlinePassed(now: now) == expected, "\(name): step \(index)")
            }
        }
    }
}

extension TargetHoldTests {
    /// Before sleep (reason `sleeping`) a target that no longer holds stops at once, its hold
    /// skipped; a change waiting for its hold is dropped; after wake a start waits as ever.
    @Test func beforeSleepAStopIsAtOnce() {
        var machine = TargetHold(holdSeconds: 3)
        #expect(machine.observe(true, now: 0) == .wake(at: 3))
        #expect(machine.deadlinePassed(now: 3) == .apply(true))
        #expect(machine.observeNow(false) == .apply(false))
        #expect(machine.observeNow(false) == .none)
        #expect(machine.observe(true, now: 20) == .wake(at: 23))
        #expect(machine.observeNow(false) == .none)                 // never started: nothing to stop
        #expect(machine.deadlinePassed(now: 23) == .none)           // the waiting start is gone
    }
}

@Suite struct DispatcherConfigurationTests {
    @Test func defaults() throws {
        let config = try DispatcherConfiguration.parse("", file: "d.conf")
        #expect(config == DispatcherConfiguration())
        #expect(config.targets.enabled && config.scripts.enabled)
        #expect(NetworkTarget.allCases.map { config.targets.hold(for: $0) } == [3, 3, 3])
        #expect(config.scripts.timeoutSeconds == 30)
        #expect(config.scripts.directories == ["/etc/reachd/dispatcher.d", "/usr/local/lib/reachd/dispatcher.d", "/usr/lib/reachd/dispatcher.d"])
        #expect(config.changes(forScript: "10-any") == [])
    }

    @Test func everyKey() throws {
        let config = try DispatcherConfiguration.parse("""
            [Targets]
            Enabled=no
            HoldSec=5
            InternetHoldSec=500ms
            UnmeteredHoldSec=1min
            [Scripts]
            Enabled=yes
            Timeout=2.5
            Directories=/srv/a /srv/b
            Changes=status connectivity
            Changes.50-vpn*=vpn
            Changes.*-log=status,primary
            """, file: "d.conf")
        #expect(!config.targets.enabled)
        #expect(config.targets.hold(for: .online) == 5)
        #expect(config.targets.hold(for: .internet) == 0.5)
        #expect(config.targets.hold(for: .unmetered) == 60)
        #expect(config.scripts.timeoutSeconds == 2.5)
        #expect(config.scripts.directories == ["/srv/a", "/srv/b"])
        #expect(config.changes(forScript: "10-hook") == ["status", "connectivity"])
        #expect(config.changes(forScript: "50-vpn-up") == ["vpn"])
        #expect(config.changes(forScript: "90-log") == ["status", "primary"])
    }

    @Test func dropInOverridesAndResets() throws {
        let base = try DispatcherConfiguration.parse("[Targets]\nInternetHoldSec=1\n[Scripts]\nChanges.a*=vpn\nDirectories=/x\n", file: "a.conf")
        let config = try DispatcherConfiguration.parse("[Targets]\nInternetHoldSec=\n[Scripts]\nChanges.a*=\nDirectories=\n", file: "b.conf", into: base)
        #expect(config.targets.hold(for: .internet) == 3)
        #expect(config.changes(forScript: "a1") == [])
        #expect(config.scripts.directories == DispatcherConfiguration.defaultScriptDirectories)
    }

    @Test(arguments: [
        ("[Targets]\nHoldSec=soon\n", "d.conf:2: [Targets] HoldSec=soon: bad time span (expected seconds, e.g. 3 or 500ms)"),
        ("[Targets]\nHoldSec=2d\n", "d.conf:2: [Targets] HoldSec=2d: bad time span (expected seconds, e.g. 3 or 500ms)"),
        ("[Scripts]\nTimeout=0\n", "d.conf:2: [Scripts] Timeout=0: bad time span (must be greater than 0)"),
        ("[Scripts]\nDirectories=etc/x\n", "d.conf:2: [Scripts] Directories=etc/x: bad path (must be absolute)"),
        ("[Scripts]\nChanges=status wifi\n", "d.conf:2: [Scripts] Changes=status wifi: unknown status field 'wifi' (expected some of "
            + Status.Field.byName.map(\.rawValue).joined(separator: " ") + ")"),
        ("[Scripts]\nChanges.=vpn\n", "d.conf:2: [Scripts] Changes.=vpn: missing script name glob after 'Changes.' (expected e.g. Changes.50-vpn*=vpn)"),
        ("[Scripts]\nTimeOut=3\n", "d.conf:2: [Scripts] TimeOut=3: unknown key in section [Scripts] (expected one of Enabled= Timeout= Directories= Changes= Changes.GLOB=) (did you mean Timeout=?)"),
        ("[Scripts]\nChange.vpn=vpn\n", "d.conf:2: [Scripts] Change.vpn=vpn: unknown key in section [Scripts] (expected one of Enabled= Timeout= Directories= Changes= Changes.GLOB=) (did you mean Changes.GLOB=?)"),
        ("[Dispatch]\n", "d.conf:1: [Dispatch] unknown section (expected one of [Targets] [Scripts] [Dispatcher]) (did you mean [Dispatcher]?)"),
        ("[Dispatcher]\nMinIntervalSec=2h\n", "d.conf:2: [Dispatcher] MinIntervalSec=2h: time span out of range (0 to 1h)"),
        ("[Dispatcher]\nMinIntervalSec=-1\n", "d.conf:2: [Dispatcher] MinIntervalSec=-1: bad time span (expected seconds, e.g. 1 or 500ms)"),
        ("[Dispatcher]\nMinInterval=1\n", "d.conf:2: [Dispatcher] MinInterval=1: unknown key in section [Dispatcher] (expected one of MinIntervalSec=) (did you mean MinIntervalSec=?)"),
        ("[Targets]\nEnabled=maybe\n", "d.conf:2: [Targets] Enabled=maybe: bad boolean (expected yes/no, true/false, on/off or 1/0)"),
    ])
    func badValuesNameFileLineAndKey(_ text: String, _ message: String) {
        #expect(throws: ConfigurationError.self) { try DispatcherConfiguration.parse(text, file: "d.conf") }
        do { _ = try DispatcherConfiguration.parse(text, file: "d.conf") } catch { #expect(error.description == message) }
    }

    struct Files: ConfigurationFileSource {
        var files: [String: String]
        func contents(of path: String) throws(ConfigurationError) -> String? { files[path] }
        func fileNames(in directory: String) throws(ConfigurationError) -> [String] {
            files.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }
        }
    }

    @Test func loadsMainFileThenDropInsInOrder() throws {
        let files = Files(files: [
            "/e/dispatcher.conf": "[Targets]\nHoldSec=1\n",
            "/e/dispatcher.conf.d/20-b.conf": "[Targets]\nHoldSec=3\n",
            "/e/dispatcher.conf.d/10-a.conf": "[Targets]\nHoldSec=2\nOnlineHoldSec=7\n",
            "/e/dispatcher.conf.d/notes.txt": "[Nonsense]\n",
        ])
        let config = try DispatcherConfiguration.load(mainFile: "/e/dispatcher.conf", source: files)
        #expect(config.targets.holdSeconds == 3)
        #expect(config.targets.hold(for: .online) == 7)
        #expect(throws: ConfigurationError.self) { try DispatcherConfiguration.load(mainFile: "/none.conf", mustExist: true, source: files) }
        #expect(try DispatcherConfiguration.load(mainFile: "/none.conf", source: files) == DispatcherConfiguration())
    }
}

@Suite struct DispatcherEnvironmentTests {
    @Test(arguments: [
        ("eth0", "eth0"),
        ("eth\u{1b}[31m", "eth\\x1b[31m"),
        ("a\nb\tc", "a\\x0ab\\x09c"),
        ("back\\slash", "back\\\\slash"),
        ("\u{7f}\u{9b}", "\\x7f\\u{9b}"),
        ("rtl\u{202e}x", "rtl\\u{202e}x"),
        ("wlan-café", "wlan-café"),
    ])
    func escapesControlsAndBackslash(_ raw: String, _ escaped: String) {
        #expect(DispatcherEnvironment.escaped(raw) == escaped)
    }

    /// A value from the network is cut at 4096 bytes, never inside an escape or a character.
    @Test(arguments: [
        (String(repeating: "a", count: 5000), String(repeating: "a", count: 4096)),
        ("a" + String(repeating: "\u{1b}", count: 2000), "a" + String(repeating: "\\x1b", count: 1023)),
        (String(repeating: "é", count: 3000), String(repeating: "é", count: 2048)),
        ("x" + String(repeating: "é", count: 3000), "x" + String(repeating: "é", count: 2047)),
        (String(repeating: "b", count: 4096), String(repeating: "b", count: 4096)),
    ])
    func valuesAreBoundedInLength(_ raw: String, _ expected: String) {
        let value = DispatcherEnvironment.value(raw)
        #expect(value == expected)
        #expect(value.utf8.count <= DispatcherEnvironment.maximumValueLength)
    }

    @Test func aLongPortalURLReachesTheScriptCut() {
        let url = "http://portal/login?" + String(repeating: "$(reboot);'|&*?", count: 1000)
        let current = status(.wifi, connectivity: .portal, portal: url)
        let variables = DispatcherEnvironment.variables(for: DispatchBatch(event(1, from: nil, to: current)), script: "10-hook")
        let entry = variables.first { $0.hasPrefix("REACHD_PORTAL_URL=") } ?? ""
        let value = entry.dropFirst("REACHD_PORTAL_URL=".count)
        #expect(value.utf8.count == DispatcherEnvironment.maximumValueLength)
        #expect(url.hasPrefix(value))
        #expect(variables.allSatisfy { $0.utf8.count <= DispatcherEnvironment.maximumValueLength + 40 })
    }

    @Test func variablesOfAChange() {
        var previous = status(.ethernet, connectivity: .full)
        previous.since = t0
        let current = status(.wifi, connectivity: .portal, expensive: true, interface: "wl\u{1b}0", portal: "http://portal/login?a=1\r\nX")
        var batch = DispatchBatch(event(42, from: previous, to: current))
        batch.merge(event(43, from: current, to: current, reason: .probeResult))
        let variables = DispatcherEnvironment.variables(for: batch, script: "10-hook")
        #expect(variables == [
            "LANG=C.UTF-8",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "REACHD_CHANGES=connectivity expensive interfaces primary probe status",
            "REACHD_COALESCED=2",
            "REACHD_CONNECTIVITY=portal",
            "REACHD_EFFECTIVE_TYPE=",
            "REACHD_EVENT=reachabilityChanged",
            "REACHD_EXPENSIVE=yes",
            "REACHD_GENERATION=",
            "REACHD_INTERFACE=wl\\x1b0",
            "REACHD_INTERFACE_KIND=ethernet",
            "REACHD_LINK_QUALITY=",
            "REACHD_PORTAL_URL=http://portal/login?a=1\\x0d\\x0aX",
            "REACHD_PREVIOUS_CONNECTIVITY=full",
            "REACHD_PREVIOUS_INTERFACE=eth0",
            "REACHD_PREVIOUS_REACHABLE=yes",
            "REACHD_PREVIOUS_STATUS=ethernet",
            "REACHD_REACHABLE=yes",
            "REACHD_REASON=probeResult",
            "REACHD_REASON_INTERFACE=",
            "REACHD_SCRIPT=10-hook",
            "REACHD_SEQUENCE=43",
            "REACHD_SIMULATED=no",
            "REACHD_STALL=",
            "REACHD_STATUS=wifi",
            "REACHD_VPN=",
            "REACHD_WIFI_BAND=",
            "REACHD_WIFI_BARS=",
            "REACHD_WIFI_BSSID=",
            "REACHD_WIFI_SIGNAL_DBM=",
            "REACHD_WIFI_SSID=",
        ])
        // Nothing a script gets holds a control byte.
        #expect(variables.allSatisfy { !$0.unicodeScalars.contains(where: TerminalText.needsEscape) })
    }

    /// `REACHD_STALL`: method, percentage retransmitted and segments sent since one was received,
    /// of the path's stall (the primary's, else the VPN's); empty without one, and a standby's
    /// stall is not the path's.
    @Test(arguments: [
        (0.958, 48, "primary", "tcp 96 48"),
        (1.0, 10, "vpn", "tcp 100 10"),
        (0.8, 2_000_000, "primary", "tcp 80 2000000"),
        (0.9, 12, "standby", ""),
        (0.9, 12, "nowhere", ""),
    ])
    func stallOfThePath(failRate: Double, sent: Int, on: String, expected: String) {
        let stall = DataStall(since: t0, method: .tcp, failRate: failRate, sentSinceReceive: sent, periodMs: 10_000)
        var current = status(.wifi, connectivity: .full)
        var standby = Interface(name: "wwan0", index: 3, kind: .wwan, up: true, carrier: true, operstate: "up",
                                addresses: ["10.1.0.2/24"], metered: true, connectivity: .full)
        var vpn = Interface(name: "wg0", index: 9, kind: .vpn, up: true, carrier: true, operstate: "up",
                            addresses: ["10.9.0.2/32"], metered: false)
        switch on {
        case "primary": current.primary?.stall = stall
        case "vpn": vpn.stall = stall
        case "standby": standby.stall = stall
        default: break
        }
        current.vpn = vpn
        current.interfaces += [standby, vpn]
        let variables = DispatcherEnvironment.variables(for: DispatchBatch(event(3, from: status(), to: current)), script: "s")
        #expect(variables.contains("REACHD_STALL=\(expected)"), "\(variables)")
    }

    /// The primary's Wi-Fi connection, its hostile name escaped once more for the script.
    @Test func variablesOfAWiFiPrimary() {
        var current = status(.wifi, interface: "wlan0")
        current.primary?.wifi = WiFi(ssid: WiFiSSID(bytes: [0x63, 0x1b, 0x0a, 0xff]).display, bssid: "02:11:22:33:44:55",
                                     frequencyMHz: 5180, band: .band5GHz, signalDbm: -61, bars: 3, owner: .iwd)
        let variables = DispatcherEnvironment.variables(for: DispatchBatch(event(9, from: nil, to: current)), script: "s")
        #expect(variables.filter { $0.hasPrefix("REACHD_WIFI_") } == [
            "REACHD_WIFI_BAND=5GHz", "REACHD_WIFI_BARS=3", "REACHD_WIFI_BSSID=02:11:22:33:44:55", "REACHD_WIFI_SIGNAL_DBM=-61",
            #"REACHD_WIFI_SSID=c\\x1b\\x0a\\xff"#,
        ])
        #expect(variables.allSatisfy { !$0.unicodeScalars.contains(where: TerminalText.needsEscape) })
    }

    @Test func variablesOfAnInitialEvent() {
        let variables = DispatcherEnvironment.variables(for: DispatchBatch(event(7, from: nil, to: status(.notReachable))), script: "s")
        #expect(variables.contains("REACHD_EVENT=initial"))
        #expect(variables.contains("REACHD_PREVIOUS_STATUS="))
        #expect(variables.contains("REACHD_PREVIOUS_REACHABLE="))
        #expect(variables.contains("REACHD_STATUS=notReachable"))
        #expect(variables.contains("REACHD_REACHABLE=no"))
        #expect(variables.contains("REACHD_CONNECTIVITY=none"))
        #expect(variables.contains("REACHD_REASON=initial"))
        #expect(variables.contains("REACHD_CHANGES="))
        #expect(variables.contains("REACHD_INTERFACE="))
    }
}

@Suite struct DispatchBatchTests {
    @Test func mergeKeepsFirstPreviousLastCurrentAndUnionOfChanges() {
        let a = status(.notReachable), b = status(.ethernet, connectivity: .unknown), c = status(.ethernet, connectivity: .full)
        var batch = DispatchBatch(event(10, from: a, to: b, reason: .routeAdded))
        #expect(batch.count == 1)
        batch.merge(event(11, from: b, to: c, reason: .probeResult))
        #expect(batch.count == 2)
        #expect(batch.event.sequence == 11)
        #expect(batch.event.previous == a)
        #expect(batch.event.current == c)
        #expect(batch.event.reason.code == .probeResult)
        #expect(batch.event.changes == ["connectivity", "gateways", "interfaces", "ipv4", "primary", "probe", "reachable", "status", "flags"].sorted())
        // A flap inside the batch still shows in its changes, though first and last state are equal.
        var flap = DispatchBatch(event(20, from: c, to: a, reason: .carrierLost))
        flap.merge(event(21, from: a, to: c, reason: .carrierGained))
        #expect(flap.event.previous == flap.event.current)
        #expect(flap.event.changes.contains("reachable"))
        #expect(flap.count == 2)
    }

    @Test func initialMergedWithChangeIsAChangeWithoutPrevious() {
        var batch = DispatchBatch(event(1, from: nil, to: status(.notReachable)))
        batch.merge(event(2, from: status(.notReachable), to: status(.ethernet), reason: .routeAdded))
        #expect(batch.event.event == .reachabilityChanged)
        #expect(batch.event.previous == nil)
    }

    @Test func queueRunsOneBatchAtATimeAndCoalescesTheRest() {
        var queue = ScriptBatchQueue()
        let s = status()
        guard case .run(let first) = queue.received(event(1, from: s, to: s), now: 0) else { Issue.record("no run"); return }
        #expect(first.event.sequence == 1)
        #expect(queue.received(event(2, from: s, to: s), now: 0) == .none)
        #expect(queue.received(event(3, from: s, to: s), now: 0) == .none)
        #expect(queue.received(event(4, from: s, to: s), now: 0) == .none)
        guard case .run(let second) = queue.finished(now: 0) else { Issue.record("no second run"); return }
        #expect(second.event.sequence == 4)
        #expect(second.count == 3)
        #expect(queue.finished(now: 0) == .none)
        #expect(!queue.running)
        guard case .run(let third) = queue.received(event(5, from: s, to: s), now: 0) else { Issue.record("no third run"); return }
        #expect(third.count == 1)
    }

    /// What came within the interval waits for it, merged; the wake-up is asked for once; an
    /// early wake-up waits again; the run after the interval has the last event.
    @Test func queueRunsAtMostOncePerIntervalAndMergesWhatCameBetween() {
        var queue = ScriptBatchQueue(minimumInterval: 1)
        let s = status()
        guard case .run(let first) = queue.received(event(1, from: nil, to: s), now: 10) else { Issue.record("no run"); return }
        #expect(first.count == 1)
        #expect(queue.finished(now: 10.05) == .none)
        #expect(queue.isIdle)
        #expect(queue.received(event(2, from: s, to: s), now: 10.1) == .wake(at: 11))
        #expect(queue.received(event(3, from: s, to: s), now: 10.2) == .none)
        #expect(queue.received(event(4, from: s, to: s), now: 10.9) == .none)
        #expect(!queue.isIdle && !queue.running)
        #expect(queue.deadlinePassed(now: 10.95) == .wake(at: 11))
        guard case .run(let second) = queue.deadlinePassed(now: 11) else { Issue.record("no run after the interval"); return }
        #expect(second.event.sequence == 4)
        #expect(second.count == 3)
        // A run that takes longer than the interval: what came meanwhile runs when it ends.
        #expect(queue.received(event(5, from: s, to: s), now: 11.5) == .none)
        guard case .run(let third) = queue.finished(now: 12.5) else { Issue.record("no run after a long batch"); return }
        #expect(third.event.sequence == 5)
        // Quiet for longer than the interval: the next event runs at once.
        #expect(queue.finished(now: 12.6) == .none)
        guard case .run(let fourth) = queue.received(event(6, from: s, to: s), now: 20) else { Issue.record("no run"); return }
        #expect(fourth.count == 1)
    }

    /// 200 events a second for 10 s (a router advertising a new DNS server each time), scripts
    /// that take 10 ms: one run per interval, every event in exactly one run, the last one in the
    /// last run. Without the interval, the same flood gives a run every 10 ms.
    @Test(arguments: [(1.0, 11), (0.0, 1000)])
    func aFloodIsOneRunPerInterval(_ interval: Double, _ atMost: Int) {
        var queue = ScriptBatchQueue(minimumInterval: interval)
        let s = status()
        var runs: [DispatchBatch] = []
        var starts: [Double] = []
        var runningUntil: Double?
        var wake: Double?
        func handle(_ action: ScriptBatchQueue.Action, at now: Double) {
            switch action {
            case .none: break
            case .run(let batch): runs.append(batch); starts.append(now); runningUntil = now + 0.010
            case .wake(let at): #expect(wake == nil, "one timer at a time"); wake = at
            }
        }
        // The clock advances in 1 ms steps; each step delivers what is due, in order.
        var sequence = 0
        for millisecond in 0..<12_000 {
            let now = Double(millisecond) / 1000
            if let end = runningUntil, now >= end { runningUntil = nil; handle(queue.finished(now: now), at: now) }
            if let at = wake, now >= at { wake = nil; handle(queue.deadlinePassed(now: now), at: now) }
            if millisecond < 10_000, millisecond % 5 == 0 {
                sequence += 1
                handle(queue.received(event(sequence, from: sequence == 1 ? nil : s, to: s), now: now), at: now)
            }
        }
        #expect(sequence == 2000)
        #expect(runs.count <= atMost, "\(runs.count) runs")
        #expect(runs.count >= (interval > 0 ? 10 : 500))
        #expect(runs.map(\.count).reduce(0, +) == sequence, "every event in exactly one run")
        #expect(runs.last?.event.sequence == sequence, "the last event ran")
        #expect(queue.isIdle)
        if interval > 0 {
            #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 >= interval - 1e-9 }, "runs start an interval apart")
            #expect(runs.dropFirst().allSatisfy { $0.count > 1 }, "merged")
        }
    }
}

@Suite struct DispatcherScriptTests {
    typealias Facts = ScriptFileFacts
    @Test(arguments: [
        (Facts(kind: .regular, uid: 0, mode: 0o755), DispatcherScript.Verdict.run),
        (Facts(kind: .regular, uid: 0, mode: 0o700), .run),
        (Facts(kind: .regular, uid: 1000, mode: 0o755), .refused("owned by uid 1000, not by root")),
        (Facts(kind: .regular, uid: 500, mode: 0o755), .run),   // the dispatcher's own user
        (Facts(kind: .regular, uid: 0, mode: 0o777), .refused("writable by group (mode 0777)")),
        (Facts(kind: .regular, uid: 0, mode: 0o757), .refused("writable by others (mode 0757)")),
        (Facts(kind: .regular, uid: 0, mode: 0o4755), .refused("set-user-ID or set-group-ID (mode 4755)")),
        (Facts(kind: .regular, uid: 0, mode: 0o644), .refused("not executable (mode 0644)")),
        (Facts(kind: .directory, uid: 0, mode: 0o755), .refused("is a directory")),
        (Facts(kind: .other, uid: 0, mode: 0o755), .refused("not a regular file")),
        (Facts(kind: .danglingLink, uid: 0, mode: 0o777), .refused("dangling symbolic link")),
        (Facts(kind: .maskLink, uid: 0, mode: 0o666), .masked),
    ])
    func verdicts(_ facts: Facts, _ verdict: DispatcherScript.Verdict) {
        #expect(DispatcherScript.verdict(for: facts, allowedOwner: 500) == verdict)
    }

    @Test func selectMergesByNameEarlierDirectoryWinsInByteOrder() {
        let ok = Facts(kind: .regular, uid: 0, mode: 0o755)
        let scripts = DispatcherScript.select([
            ("/etc/d", [("20-b", ok), ("10-a", Facts(kind: .maskLink, uid: 0, mode: 0o777)), (".hidden", ok), ("x~", ok), ("Z", ok)]),
            ("/usr/lib/d", [("10-a", ok), ("20-b", ok), ("30-c", ok), ("30-c.dpkg-old", ok)]),
        ], allowedOwner: 0)
        #expect(scripts == [
            DispatcherScript(name: "10-a", path: "/etc/d/10-a", verdict: .masked),
            DispatcherScript(name: "20-b", path: "/etc/d/20-b", verdict: .run),
            DispatcherScript(name: "30-c", path: "/usr/lib/d/30-c", verdict: .run),
            DispatcherScript(name: "Z", path: "/etc/d/Z", verdict: .run),
        ])
    }

    @Test(arguments: [
        ([String](), ["interfaces"], ReachabilityEvent.Kind.reachabilityChanged, true),
        (["status", "connectivity"], ["interfaces"], .reachabilityChanged, false),
        (["status", "connectivity"], ["connectivity", "probe"], .reachabilityChanged, true),
        (["vpn"], [], .initial, true),
    ])
    func filterByChanges(_ fields: [String], _ changes: [String], _ kind: ReachabilityEvent.Kind, _ runs: Bool) {
        var e = event(1, from: kind == .initial ? nil : status(), to: status())
        e.changes = changes
        #expect(DispatcherScript.wants(fields, DispatchBatch(e)) == runs)
    }
}

@Suite struct DispatcherProgressTests {
    @Test func changeEventsAreActedOnAsTheyAre() {
        let change = event(5, from: status(.notReachable), to: status())
        #expect(DispatcherProgress.eventToAct(on: change, after: nil) == change)
        #expect(DispatcherProgress.eventToAct(on: change, after: DispatcherProgress(sequence: 4, status: status(.notReachable))) == change)
    }

    @Test func initialWithoutProgressIsTheStateAtStart() {
        let initial = event(5, from: nil, to: status())
        #expect(DispatcherProgress.eventToAct(on: initial, after: nil) == initial)
    }

    @Test func resyncWithTheSameStatusRunsNothing() {
        var same = status()
        same.since = t0.addingTimeInterval(60)   // a restarted reachd: a new `since`, same facts
        var resync = event(900, from: nil, to: same)
        resync.reason = Reason(code: .resync)
        #expect(DispatcherProgress.eventToAct(on: resync, after: DispatcherProgress(sequence: 5, status: status())) == nil)
    }

    @Test func resyncWithAnotherStatusIsAChangeFromWhatScriptsLastSaw() throws {
        var resync = event(900, from: nil, to: status(.ethernet, connectivity: .portal))
        resync.reason = Reason(code: .resync)
        let acted = try #require(DispatcherProgress.eventToAct(on: resync, after: DispatcherProgress(sequence: 5, status: status())))
        #expect(acted.event == .reachabilityChanged)
        #expect(acted.sequence == 900)
        #expect(acted.reason.code == .resync)
        #expect(acted.previous == status())
        #expect(acted.changes == ["connectivity", "probe"])
    }

    @Test func progressRoundTripsThroughJSON() throws {
        let progress = DispatcherProgress(sequence: 1_800_000_000_123, status: status(.wifi, interface: "wl\u{1b}x"))
        let data = try WireJSON.encoder().encode(progress)
        #expect(try WireJSON.decoder().decode(DispatcherProgress.self, from: data) == progress)
    }
}

@Suite struct DispatcherOptionsTests {
    @Test func everyOption() throws {
        let options = try DispatcherOptions.parse(["--config", "/c.conf", "--socket=/s", "--state-dir", "/st", "--script-dir", "/a",
                                                   "--script-dir=/b", "--systemctl", "/bin/true", "--log-level", "DEBUG", "--check-config"])
        var expected = DispatcherOptions()
        expected.configPath = "/c.conf"; expected.socketPath = "/s"; expected.stateDirectory = "/st"
        expected.scriptDirectories = ["/a", "/b"]; expected.systemctl = "/bin/true"; expected.logLevel = .debug
        expected.checkConfig = true
        #expect(options == expected)
        #expect(try DispatcherOptions.parse([]) == DispatcherOptions())
    }

    @Test(arguments: [
        (["--state-dir", "run/x"], "invalid value 'run/x' for '--state-dir' (expected an absolute path)"),
        (["--script-dir"], "option '--script-dir' needs a value"),
        (["--log-level", "loud"], "invalid value 'loud' for '--log-level' (expected debug, info, notice, warning, error)"),
        (["--hold"], "unknown option '--hold'"),
        (["now"], "unexpected argument 'now'"),
        (["--version=1"], "invalid value '1' for '--version' (expected no value)"),
    ])
    func badArguments(_ arguments: [String], _ message: String) {
        do {
            _ = try DispatcherOptions.parse(arguments)
            Issue.record("accepted \(arguments)")
        } catch {
            #expect("\(error)" == message)
        }
    }
}

/// `config/dispatcher.conf` documents every key with its default, and only keys that exist.
@Suite struct DocumentedDispatcherConfigurationTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../config/dispatcher.conf").standardized.path

    @Test func documentedFileParsesAsIsToTheDefaults() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(try DispatcherConfiguration.parse(text, file: Self.path) == DispatcherConfiguration())
    }

    @Test func documentedDefaultsAreTheBuiltInDefaults() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            if line.hasPrefix("#"), let second = line.dropFirst().first, second.isUppercase, line.contains("=") {
                return String(line.dropFirst())
            }
            return String(line)
        }.joined(separator: "\n")
        var config = try DispatcherConfiguration.parse(uncommented, file: Self.path)
        // The documented examples.
        #expect(config.targets.hold(for: .internet) == 10)
        #expect(config.changes(forScript: "50-vpn-up") == ["vpn"])
        config.targets.holdOverrides = [:]
        config.scripts.changesByScript = []
        #expect(config == DispatcherConfiguration())
        let keys = Set(try INIParser.parse(uncommented, file: Self.path).assignments.map {
            "[\($0.section)] " + ($0.key.hasPrefix("Changes.") ? "Changes.GLOB" : $0.key)
        })
        #expect(keys == ["[Targets] Enabled", "[Targets] HoldSec", "[Targets] OnlineHoldSec", "[Targets] InternetHoldSec",
                         "[Targets] UnmeteredHoldSec", "[Scripts] Enabled", "[Scripts] Timeout", "[Scripts] Directories",
                         "[Scripts] Changes", "[Scripts] Changes.GLOB", "[Dispatcher] MinIntervalSec"])
    }
}
