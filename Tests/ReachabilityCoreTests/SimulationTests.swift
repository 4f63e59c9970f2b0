import Foundation
import Testing
@testable import ReachabilityCore

/// Real statuses the simulations are laid over.
enum SimulationFixtures {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let eth = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                               addresses: ["10.0.0.2/24"], metered: false)
    static let online = Status(status: .ethernet, reachable: true, connectivity: .full, primary: eth, vpn: nil,
                               cellular: nil, expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.0.1"],
                               flags: [.reachable], interfaces: [eth],
                               probe: Probe(url: "http://10.0.0.1/check", result: .full, httpStatus: 204, checkedAt: t0),
                               since: t0)
    static var offline: Status {
        var s = Status.initial(since: t0)
        s.interfaces = [eth]
        s.probe = Probe(url: "http://10.0.0.1/check", result: .none, error: "not reachable: no usable default route", checkedAt: t0)
        return s
    }
    static var meteredOnline: Status {
        var s = online
        s.primary?.metered = true
        s.expensive = true
        return s
    }
}

@Suite struct SimulationResolveTests {
    typealias F = SimulationFixtures
    static let now = F.t0.addingTimeInterval(60)

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let simulation: Simulation
        let real: Status
        let check: @Sendable (Status) -> Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "2G over ethernet: cellular object, expensive, isWWAN, primary kind wwan",
             simulation: Simulation(status: .wwan2G), real: F.online) { s in
            s.status == .wwan2G && s.reachable && s.simulated && s.expensive
                && s.cellular?.generation == "2G" && s.cellular?.accessTechnology == "edge" && s.cellular?.interface == "eth0"
                && s.flags == [.reachable, .isWWAN] && s.primary?.kind == .wwan && s.primary?.name == "eth0"
                && s.connectivity == .full && s.probe?.result == .full && s.gateways == ["10.0.0.1"]
        },
        Case(name: "portal keeps the path, fakes the probe",
             simulation: Simulation(connectivity: .portal), real: F.online) { s in
            s.status == .ethernet && s.connectivity == .portal && s.probe?.result == .portal
                && s.probe?.portalUrl == Simulation.simulatedPortalURL && s.probe?.url == "http://10.0.0.1/check"
                && s.primary == F.eth && !s.expensive && s.cellular == nil
        },
        Case(name: "notReachable: connectivity none, nothing of the path",
             simulation: Simulation(status: .notReachable), real: F.online) { s in
            !s.reachable && s.connectivity == .none && s.probe?.result == Connectivity.none && s.primary == nil
                && s.gateways.isEmpty && s.flags.isEmpty && !s.ipv4 && !s.expensive && s.interfaces == [F.eth]
        },
        Case(name: "wifi while offline: stand-in primary, connectivity unknown",
             simulation: Simulation(status: .wifi), real: F.offline) { s in
            s.reachable && s.status == .wifi && s.primary?.name == Simulation.simulatedInterface
                && s.primary?.kind == .wifi && s.connectivity == .unknown && s.probe == nil && s.ipv4
        },
        Case(name: "accessTechnology alone implies the generation",
             simulation: Simulation(accessTechnology: "hspa-plus"), real: F.online) { s in
            s.status == .wwan3G && s.cellular?.accessTechnology == "hspa-plus" && s.cellular?.generation == "3G"
        },
        Case(name: "wwan: no generation, no technology",
             simulation: Simulation(status: .wwan), real: F.online) { s in
            s.status == .wwan && s.cellular?.generation == nil && s.cellular?.accessTechnology == nil && s.expensive
        },
        Case(name: "expensive given wins over cellular",
             simulation: Simulation(status: .wwan4G, expensive: false), real: F.online) { s in
            s.status == .wwan4G && !s.expensive && s.cellular?.accessTechnology == "lte"
        },
        Case(name: "wifi on a metered interface stays expensive",
             simulation: Simulation(status: .wifi), real: F.meteredOnline) { s in
            s.status == .wifi && s.expensive && s.primary?.kind == .wifi
        },
        Case(name: "limited: probe with an error, no portal",
             simulation: Simulation(status: .wwan5G, connectivity: .limited), real: F.online) { s in
            s.connectivity == .limited && s.probe?.result == .limited && s.probe?.portalUrl == nil
                && s.cellular?.accessTechnology == "5gnr"
        },
    ]

    @Test(arguments: cases) func resolves(_ c: Case) throws {
        let status = try c.simulation.resolve(over: c.real, now: Self.now)
        #expect(c.check(status), "\(status)")
        #expect(status.simulated)
        #expect(status.since == Self.now)
        // The rule of every published status.
        #expect(status.isConsistent, "\(status)")
    }

    @Test(arguments: [
        (Simulation(status: .notReachable, connectivity: .full), F.online, "connectivity"),
        (Simulation(status: .wifi, connectivity: Connectivity.none), F.online, "connectivity"),
        (Simulation(connectivity: .portal), F.offline, "connectivity"),
        (Simulation(status: .notReachable, expensive: true), F.online, "expensive"),
        (Simulation(status: .wifi, accessTechnology: "lte"), F.online, "accessTechnology"),
        (Simulation(status: .wwan2G, accessTechnology: "lte"), F.online, "accessTechnology"),
        (Simulation(accessTechnology: "carrier-pigeon"), F.online, "accessTechnology"),
    ] as [(Simulation, Status, String)])
    func rejects(_ simulation: Simulation, _ real: Status, _ parameter: String) {
        #expect(throws: Simulation.InvalidParameter.self) { try simulation.resolve(over: real, now: Self.now) }
        do { _ = try simulation.resolve(over: real, now: Self.now) } catch { #expect(error.parameter == parameter) }
    }

    /// Every status and connectivity, over an online and an offline machine: each result is
    /// consistent, or the call is refused.
    @Test func everyCombinationIsConsistentOrRefused() {
        for real in [F.online, F.offline, F.meteredOnline] {
            for status in [nil] + NetworkStatus.allCases.map(Optional.some) {
                for connectivity in [nil] + Connectivity.allCases.map(Optional.some) {
                    let simulation = Simulation(status: status, connectivity: connectivity)
                    guard let result = try? simulation.resolve(over: real, now: Self.now) else { continue }
                    #expect(result.isConsistent, "\(simulation) over \(real.status): \(result)")
                    #expect(result.reachable == result.status.isReachable)
                    #expect(result.status.isWWAN == (result.cellular != nil))
                }
            }
        }
    }
}

@Suite struct SimulateRequestTests {
    @Test(arguments: [
        (["status": .string("wwan2G")], SimulateRequest(simulation: Simulation(status: .wwan2G), seconds: 300, whileConnected: false)),
        (["status": .string("wifi"), "connectivity": .string("portal"), "seconds": .int(5)],
         SimulateRequest(simulation: Simulation(status: .wifi, connectivity: .portal), seconds: 5, whileConnected: false)),
        (["status": .string("wwan4G"), "whileConnected": .bool(true)],
         SimulateRequest(simulation: Simulation(status: .wwan4G), seconds: nil, whileConnected: true)),
        (["expensive": .bool(true), "seconds": .null], SimulateRequest(simulation: Simulation(expensive: true), seconds: 300, whileConnected: false)),
        (["reset": .bool(true)], SimulateRequest(simulation: nil, seconds: nil, whileConnected: false)),
        (["reset": .bool(true), "status": .null], SimulateRequest(simulation: nil, seconds: nil, whileConnected: false)),
    ] as [([String: JSONValue], SimulateRequest)])
    func parses(_ parameters: [String: JSONValue], _ expected: SimulateRequest) throws {
        #expect(try SimulateRequest.parse(parameters) == expected)
    }

    @Test(arguments: [
        ([:], "status"),
        (["reset": .bool(false)], "status"),
        (["status": .string("wwan6G")], "status"),
        (["status": .int(3)], "status"),
        (["connectivity": .string("great")], "connectivity"),
        (["status": .string("wifi"), "seconds": .int(0)], "seconds"),
        (["status": .string("wifi"), "seconds": .int(-5)], "seconds"),
        (["status": .string("wifi"), "seconds": .int(86_401)], "seconds"),
        (["status": .string("wifi"), "seconds": .string("5")], "seconds"),
        (["status": .string("wifi"), "whileConnected": .string("yes")], "whileConnected"),
        (["reset": .bool(true), "status": .string("wifi")], "status"),
        (["status": .string("wifi"), "colour": .string("blue")], "colour"),
    ] as [([String: JSONValue], String)])
    func rejects(_ parameters: [String: JSONValue], _ parameter: String) {
        do {
            _ = try SimulateRequest.parse(parameters)
            Issue.record("accepted \(parameters)")
        } catch {
            #expect(error.parameter == parameter, "\(error)")
        }
    }
}

@Suite struct SimulationOverlayTests {
    typealias F = SimulationFixtures

    static func initial(_ status: Status = F.online, sequence: Int = 100) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: F.t0, event: .initial, reason: Reason(code: .initial), previous: nil, current: status)
    }

    static func request(_ status: NetworkStatus?, connectivity: Connectivity? = nil, seconds: Int? = 10,
                        whileConnected: Bool = false) -> SimulateRequest {
        SimulateRequest(simulation: Simulation(status: status, connectivity: connectivity), seconds: seconds, whileConnected: whileConnected)
    }

    static func realEvent(_ from: Status, _ to: Status, sequence: Int, reason: Reason.Code = .carrierLost) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: F.t0, event: .reachabilityChanged, reason: Reason(code: reason),
                          previous: from, current: to)
    }

    @Test func realEventsPassThroughWithoutASimulation() {
        var overlay = SimulationOverlay(initial: Self.initial())
        let event = overlay.real(Self.realEvent(F.online, F.offline, sequence: 101))
        #expect(event?.sequence == 101)
        #expect(event?.current == F.offline)
        #expect(event?.reason.code == .carrierLost)
        #expect(overlay.published == F.offline)
    }

    /// The event a real change makes is the same whether the status subscribers saw is the very
    /// value the change starts from or only an equal one.
    @Test func passingThroughDoesNotDependOnWhichCopyWasSeen() throws {
        var equalCopy = F.online
        equalCopy.since = F.online.since // written: a value of its own, equal to the first
        #expect(equalCopy == F.online && !equalCopy.isCopy(of: F.online))
        var same = SimulationOverlay(initial: Self.initial(F.online))
        var equal = SimulationOverlay(initial: Self.initial(equalCopy))
        let real = Self.realEvent(F.online, F.meteredOnline, sequence: 500, reason: .configReloaded)
        let passedSame = same.real(real), passedEqual = equal.real(real)
        let fromSame = try #require(passedSame)
        let fromEqual = try #require(passedEqual)
        #expect(fromSame == fromEqual)
        #expect(fromSame.sequence == 101 && fromSame.changes == ["expensive", "primary"])
        #expect(fromSame.changes == F.meteredOnline.changes(from: F.online).map(\.rawValue))
        #expect(same.published == F.meteredOnline && equal.published == F.meteredOnline)
    }

    /// A real change that starts from something other than what subscribers saw is told against
    /// what they saw.
    @Test func aRealChangeIsToldAgainstWhatSubscribersSaw() throws {
        var overlay = SimulationOverlay(initial: Self.initial(F.offline))
        let passed = overlay.real(Self.realEvent(F.online, F.meteredOnline, sequence: 101))
        let event = try #require(passed)
        #expect(event.previous == F.offline)
        #expect(event.changes == F.meteredOnline.changes(from: F.offline).map(\.rawValue))
        #expect(event.changes.contains("status"))
        // Nothing reported changed against what subscribers saw: no event, whatever the real one said.
        #expect(overlay.real(Self.realEvent(F.offline, F.meteredOnline, sequence: 102)) == nil)
        #expect(overlay.sequence == 101)
    }

    @Test func startAndExpire() throws {
        var overlay = SimulationOverlay(initial: Self.initial())
        let started = try overlay.simulate(Self.request(.wwan2G, connectivity: .portal), real: F.online, owner: 7, now: F.t0)
        let event = try #require(started.event)
        #expect(event.sequence == 101 && event.reason.code == .simulation)
        #expect(event.current.simulated && event.current.status == .wwan2G)
        #expect(event.changes == ["cellular", "connectivity", "expensive", "flags", "ipv4Connectivity", "linkQuality", "primary",
                                  "probe", "simulated", "status"])
        #expect(event.current.ipv4Connectivity == .portal && event.current.ipv6Connectivity == Connectivity.none)
        #expect(overlay.timer?.seconds == 10)
        #expect(overlay.published.simulated)
        // A stale token does nothing; the right one ends it.
        #expect(overlay.expire(token: (overlay.timer?.token ?? 0) + 1, real: F.online, now: F.t0) == nil)
        let token = try #require(overlay.timer?.token)
        let ended = overlay.expire(token: token, real: F.online, now: F.t0.addingTimeInterval(10))
        let back = try #require(ended)
        #expect(back.sequence == 102 && back.reason.code == .simulation && !back.current.simulated)
        #expect(back.current.status == .ethernet)
        #expect(back.changes.contains("simulated"))
        #expect(overlay.active == nil && overlay.timer == nil)
    }

    /// What the daemon does with `timer` after each call: cancels the timer it armed unless the
    /// token is the same, arms the one named. Counts the timers alive.
    struct TimerDriver {
        var alive: [Int: Int] = [:]
        mutating func sync(_ overlay: SimulationOverlay) {
            if let timer = overlay.timer, alive[timer.token] != nil { return }
            alive.removeAll()
            if let timer = overlay.timer { alive[timer.token] = timer.seconds }
        }
    }

    /// A group member's loop of timed `Simulate` calls: one timer pending, however many calls;
    /// the replaced ones' tokens end nothing; an untimed simulation or any end leaves none.
    @Test func manySimulateCallsLeaveOneTimer() throws {
        var overlay = SimulationOverlay(initial: Self.initial())
        var driver = TimerDriver()
        var tokens: [Int] = []
        for i in 0..<1000 {
            let status: NetworkStatus = i % 2 == 0 ? .wwan2G : .wwan3G
            _ = try overlay.simulate(Self.request(status, seconds: 86_400), real: F.online, owner: i, now: F.t0)
            driver.sync(overlay)
            #expect(driver.alive.count == 1)
            tokens.append(try #require(overlay.timer?.token))
        }
        #expect(Set(tokens).count == 1000 && driver.alive.keys.first == tokens.last)
        for token in tokens.dropLast() { #expect(overlay.expire(token: token, real: F.online, now: F.t0) == nil) }
        #expect(overlay.published.simulated)

        // Replaced by one without seconds (while connected): no timer at all.
        _ = try overlay.simulate(Self.request(.wifi, seconds: nil, whileConnected: true), real: F.online, owner: 1, now: F.t0)
        driver.sync(overlay)
        #expect(overlay.timer == nil && driver.alive.isEmpty)
        // Timed again, then ended by the hang-up or a reset: none left.
        _ = try overlay.simulate(Self.request(.wwan4G, seconds: 60, whileConnected: true), real: F.online, owner: 2, now: F.t0)
        driver.sync(overlay)
        #expect(driver.alive.count == 1)
        _ = overlay.hungUp(connection: 2, real: F.online, now: F.t0)
        driver.sync(overlay)
        #expect(overlay.timer == nil && driver.alive.isEmpty)
        _ = try overlay.simulate(Self.request(.wwan4G, seconds: 60), real: F.online, owner: 3, now: F.t0)
        driver.sync(overlay)
        _ = overlay.reset(real: F.online, now: F.t0)
        driver.sync(overlay)
        #expect(overlay.timer == nil && driver.alive.isEmpty)
    }

    /// Real changes during a simulation publish nothing; the end shows them in one event.
    @Test func realChangesShowInOneEventWhenItEnds() throws {
        var overlay = SimulationOverlay(initial: Self.initial())
        _ = try overlay.simulate(Self.request(.wifi), real: F.online, owner: nil, now: F.t0)
        #expect(overlay.sequence == 101)
        #expect(overlay.real(Self.realEvent(F.online, F.offline, sequence: 101)) == nil)
        #expect(overlay.real(Self.realEvent(F.offline, F.online, sequence: 102, reason: .carrierGained)) == nil)
        #expect(overlay.real(Self.realEvent(F.online, F.offline, sequence: 103)) == nil)
        #expect(overlay.sequence == 101)
        let ended = overlay.reset(real: F.offline, now: F.t0)
        let back = try #require(ended)
        #expect(back.sequence == 102)
        #expect(back.current.status == .notReachable && !back.current.simulated)
        #expect(back.previous?.status == .wifi)
        // Afterwards real events flow again, numbered on.
        let next = overlay.real(Self.realEvent(F.offline, F.online, sequence: 104, reason: .carrierGained))
        #expect(next?.sequence == 103 && next?.previous?.status == .notReachable)
    }

    @Test func hangUpEndsOnlyTheOwnersWhileConnectedSimulation() throws {
        var overlay = SimulationOverlay(initial: Self.initial())
        _ = try overlay.simulate(Self.request(.wifi, seconds: nil, whileConnected: true), real: F.online, owner: 3, now: F.t0)
        #expect(overlay.hungUp(connection: 4, real: F.online, now: F.t0) == nil)
        // Another caller replaces it (no hang-up binding): the first caller's hang-up no longer ends it.
        let replaced = try overlay.simulate(Self.request(.wwan3G, seconds: 60), real: F.online, owner: 4, now: F.t0)
        #expect(replaced.event?.current.status == .wwan3G && replaced.event?.previous?.status == .wifi)
        #expect(overlay.hungUp(connection: 3, real: F.online, now: F.t0) == nil)
        #expect(overlay.hungUp(connection: 4, real: F.online, now: F.t0) == nil)
        #expect(overlay.published.simulated)
        _ = try overlay.simulate(Self.request(.wwan4G, seconds: nil, whileConnected: true), real: F.online, owner: 5, now: F.t0)
        let ended = overlay.hungUp(connection: 5, real: F.online, now: F.t0)
        let back = try #require(ended)
        #expect(!back.current.simulated)
    }

    @Test func sameSimulationAgainIsNoEventAndResetWithoutOneIsNone() throws {
        var overlay = SimulationOverlay(initial: Self.initial())
        #expect(overlay.reset(real: F.online, now: F.t0) == nil)
        let reset = try overlay.simulate(SimulateRequest(simulation: nil, seconds: nil, whileConnected: false), real: F.online, owner: 1, now: F.t0)
        #expect(reset.event == nil && overlay.timer == nil)
        _ = try overlay.simulate(Self.request(.wwan2G), real: F.online, owner: 1, now: F.t0)
        let again = try overlay.simulate(Self.request(.wwan2G), real: F.online, owner: 1, now: F.t0.addingTimeInterval(1))
        #expect(again.event == nil)
        #expect(overlay.sequence == 101)
    }

    @Test func invalidSimulationChangesNothing() throws {
        var overlay = SimulationOverlay(initial: Self.initial(F.offline))
        #expect(throws: Simulation.InvalidParameter.self) {
            try overlay.simulate(Self.request(nil, connectivity: .portal), real: F.offline, owner: 1, now: F.t0)
        }
        #expect(overlay.active == nil && overlay.sequence == 100 && overlay.published == F.offline)
    }
}

@Suite struct SimulationPermissionTests {
    @Test(arguments: [
        (UInt32(0), [UInt32(0)], UInt32?.none, true),
        (0, [0], 1000, true),
        (1000, [1000], nil, false),
        (1000, [1000, 27], 27, true),
        (1000, [1000, 28], 27, false),
        (65534, [65534], 27, false),
    ] as [(UInt32, [UInt32], UInt32?, Bool)])
    func allows(_ uid: UInt32, _ groups: [UInt32], _ allowed: UInt32?, _ expected: Bool) {
        #expect(SimulationPermission.allows(uid: uid, groups: groups, allowedGroup: allowed) == expected)
    }

    @Test func statusTextSaysSimulated() {
        var status = SimulationFixtures.online
        #expect(status.systemdStatusText == "ethernet via eth0, internet full")
        status.simulated = true
        #expect(status.systemdStatusText == "simulated: ethernet via eth0, internet full")
    }
}

