import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 5_000)
/// `seconds` after a reading, on both clocks.
private func + (reading: ClockReading, seconds: TimeInterval) -> ClockReading { reading.adding(seconds) }
private let url = "http://10.77.0.1/check"
private let eth = ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.2/24"], gateways: ["10.77.0.1"])
private let wlan = ProbePath(interface: "wlan0", index: 3, addresses: ["192.168.1.20/24"], gateways: ["192.168.1.1"])

private func announcing(_ path: ProbePath, _ uri: String?) -> ProbePath {
    var path = path
    path.captivePortalApi = uri
    return path
}
private let apiA = "https://10.77.0.1:8443/a", apiB = "https://10.77.0.1:8443/b"

private func configuration() -> ProbeScheduler.Configuration {
    var connectivity = ReachdConfiguration.ConnectivitySection()
    connectivity.url = url
    connectivity.intervalSeconds = 300
    return ProbeScheduler.Configuration(connectivity: connectivity, probeMinInterval: 1, initialBackoff: 2)
}

private func full(_ at: ClockReading) -> Probe { Probe(url: url, result: .full, httpStatus: 204, checkedAt: at.wall) }

private func started(_ actions: [ProbeScheduler.Action]) -> (id: Int, path: ProbePath)? {
    actions.lazy.compactMap { if case .startProbe(let id, let path) = $0 { return (id, path) } else { return nil } }.first
}
private func scheduled(_ actions: [ProbeScheduler.Action]) -> (after: TimeInterval, timer: Int)? {
    actions.lazy.compactMap { if case .schedule(let after, let timer) = $0 { return (after, timer) } else { return nil } }.first
}

/// The network's floor (docs/captive-portal.md): anyone on the link can change the API URI with
/// every router advertisement; checks that ask an API, or follow a change of its URI alone,
/// start at most once per interface every 2 s, and take the newest path when the floor passes.
@Suite struct ProbeSchedulerFloorTests {
    /// A scheduler whose last check started on `from` at t0 and completed `full`.
    private func checkedOnce(_ from: ProbePath) throws -> ProbeScheduler {
        var s = ProbeScheduler(configuration: configuration())
        let first = try #require(started(s.start(path: from, now: t0)))
        _ = s.probeCompleted(id: first.id, probe: full(t0), now: t0)
        return s
    }

    @Test(arguments: [
        // (from, to, seconds after the last start, the wait expected; nil: at once)
        (eth, announcing(eth, apiA), 0.5, 1.5 as TimeInterval?),          // an URI appears
        (announcing(eth, apiA), announcing(eth, apiB), 1.9, 0.1),          // another URI
        (announcing(eth, apiA), eth, 1.0, 1.0),                            // withdrawn: asks no API, still the floor
        (announcing(eth, apiA), announcing(eth, apiB), 2.0, nil),          // the floor has passed
        (eth, announcing(wlan, apiA), 0.5, nil),                           // another interface
        (eth, wlan, 0.1, nil),                                             // no API at all: at once, as ever
        (announcing(eth, apiA),                                            // a new address on a path with an API
         announcing(ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.3/24"], gateways: ["10.77.0.1"]), apiA), 1.5, 0.5),
    ] as [(ProbePath, ProbePath, TimeInterval, TimeInterval?)])
    func pathChangesWaitForTheFloor(from: ProbePath, to: ProbePath, after: TimeInterval, wait: TimeInterval?) throws {
        var s = try checkedOnce(from)
        let actions = s.pathChanged(to, now: t0 + after)
        if let wait {
            #expect(started(actions) == nil, "\(actions)")
            let timer = try #require(scheduled(actions))
            #expect(abs(timer.after - wait) < 1e-6)
            // When the floor has passed, the newest path is the one checked.
            #expect(started(s.timerFired(id: timer.timer, now: t0 + after + wait))?.path == to)
        } else {
            #expect(started(actions)?.path == to, "\(actions)")
        }
    }

    /// Two URIs alternating a hundred times a second for ten seconds: five checks, each of the
    /// newest URI, never one per advertisement.
    @Test func aFloodOfURIsMakesOneCheckEveryTwoSeconds() throws {
        var s = try checkedOnce(eth)
        var starts: [(ClockReading, ProbePath)] = []
        var timer: Int?
        var running: Int?
        for step in 1...1000 {
            let now = t0 + Double(step) / 100
            // The timer fires first when it is due (the checker's queue is in order).
            if let armed = timer, let due = s.timer, due == armed {
                let actions = s.timerFired(id: armed, now: now)
                if let start = started(actions) { starts.append((now, start.path)); running = start.id }
            }
            if let id = running, step % 10 == 0 {
                // A check takes a tenth of a second here.
                _ = s.probeCompleted(id: id, probe: full(now), now: now)
                running = nil
            }
            let actions = s.pathChanged(announcing(eth, step % 2 == 0 ? apiA : apiB), now: now)
            if let start = started(actions) { starts.append((now, start.path)); running = start.id }
            if let armed = scheduled(actions) { timer = armed.timer }
            // Exactly the armed timer fires (a replaced one is stale).
            if let next = s.timer { timer = next }
            _ = step
        }
        #expect(starts.count == 5, "\(starts.map { $0.0.seconds(since: t0) })")
        for (earlier, later) in zip(starts, starts.dropFirst()) {
            #expect(later.0.seconds(since: earlier.0) >= 2 - 1e-9)
        }
    }

    /// A manual request within the floor on a path with an API waits for the check the floor allows.
    @Test func aManualRequestWithinTheFloorWaitsForIt() throws {
        var s = try checkedOnce(announcing(eth, apiA))
        let actions = s.probeRequested(7, now: t0 + 1.5)
        #expect(started(actions) == nil)
        let timer = try #require(scheduled(actions))
        #expect(abs(timer.after - 0.5) < 1e-6)
        // A second request joins the first.
        #expect(s.probeRequested(8, now: t0 + 1.6) == [])
        let check = try #require(started(s.timerFired(id: timer.timer, now: t0 + 2)))
        let done = s.probeCompleted(id: check.id, probe: full(t0 + 2.1), now: t0 + 2.1)
        #expect(done.contains(.reply(requests: [7, 8], .probe(full(t0 + 2.1)))))
    }

    /// Every check thread busy is no verdict: nothing is published, the same path is tried again soon.
    @Test func aBusyPoolRetriesAndPublishesNothing() throws {
        var s = ProbeScheduler(configuration: configuration())
        let first = try #require(started(s.start(path: eth, now: t0)))
        let busy = s.probeBusy(id: first.id)
        #expect(busy.count == 1)
        let retry = try #require(scheduled(busy))
        #expect(retry.after == 0.5)
        #expect(!busy.contains { if case .publish = $0 { return true } else { return false } })
        #expect(started(s.timerFired(id: retry.timer, now: t0 + 0.5))?.path == eth)
        // A stale id changes nothing.
        #expect(s.probeBusy(id: first.id) == [])
    }

    private func replies(_ actions: [ProbeScheduler.Action]) -> [(requests: [Int], reply: ProbeScheduler.Reply)] {
        actions.compactMap { if case .reply(let requests, let reply) = $0 { return (requests, reply) } else { return nil } }
    }

    /// `Probe()` right after a router announced an API URI: never the verdict from before (the
    /// one `ProbeMinInterval=` would repeat), but that of the check that asks the new API.
    @Test func aProbeAfterANewURIWaitsForItsCheck() throws {
        var s = try checkedOnce(eth)
        let announced = announcing(eth, apiA)
        let floorTimer = try #require(scheduled(s.pathChanged(announced, now: t0 + 0.1)))
        // Within `ProbeMinInterval=` of the last check, which knew nothing of the API.
        let asked = s.probeRequested(7, now: t0 + 0.2)
        #expect(replies(asked).isEmpty, "\(asked)")
        let check = try #require(started(s.timerFired(id: floorTimer.timer, now: t0 + 2)))
        #expect(check.path == announced)
        var verdict = full(t0 + 4)
        verdict.error = "captive-portal API \(apiA) not used: timed out"
        let done = s.probeCompleted(id: check.id, probe: verdict, now: t0 + 4)
        #expect(replies(done).map(\.requests) == [[7]])
        #expect(replies(done).first?.reply == .probe(verdict))
    }

    /// A request that joins a check begun before the URI changed is answered by the check that
    /// follows it, not by that one.
    @Test func aProbeJoiningACheckFromBeforeTheURIWaitsForTheNext() throws {
        var s = try checkedOnce(eth)
        let running = try #require(started(s.probeRequested(1, now: t0 + 5))?.id)
        let announced = announcing(eth, apiA)
        #expect(s.pathChanged(announced, now: t0 + 5.5).isEmpty)
        #expect(s.probeRequested(2, now: t0 + 5.6).isEmpty)
        let first = s.probeCompleted(id: running, probe: full(t0 + 6), now: t0 + 6)
        #expect(replies(first).isEmpty, "\(first)")
        #expect(first.contains(.publish(full(t0 + 6))))
        let next = try #require(scheduled(first))
        let recheck = try #require(started(s.timerFired(id: next.timer, now: t0 + 7.5)))
        #expect(recheck.path == announced)
        let done = s.probeCompleted(id: recheck.id, probe: full(t0 + 8), now: t0 + 8)
        #expect(replies(done).map(\.requests) == [[1, 2]])
    }
}

private let dualStack = ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.2/24", "2001:db8:77::2/64"], gateways: ["10.77.0.1"])

private func routers(_ path: ProbePath, _ first: Int, count: Int = 3) -> ProbePath {
    var path = path
    path.gateways = (first..<first + count).map { String(format: "fe80::%x", $0) }
    return path
}
private func cancelled(_ actions: [ProbeScheduler.Action]) -> Bool {
    actions.contains { if case .cancelProbe = $0 { return true } else { return false } }
}

/// Routers that come and go (a host on the link announcing itself from a new link-local
/// address every few milliseconds) and captive-portal API URIs that change faster than a check
/// answers: neither cancels the check under way, withholds its verdict, or starts checks faster
/// than the network's floor.
@Suite struct RouterChurnTests {
    @Test func aChangeOfRoutersAloneKeepsTheCheckUnderWay() throws {
        var s = ProbeScheduler(configuration: configuration())
        let check = try #require(started(s.start(path: routers(dualStack, 1), now: t0)))
        #expect(s.pathChanged(routers(dualStack, 2), now: t0 + 0.2) == [])
        #expect(s.inFlight == check.id)
        let done = s.probeCompleted(id: check.id, probe: full(t0 + 0.5), now: t0 + 0.5)
        #expect(done.first == .publish(full(t0 + 0.5)))
        // The newest routers are checked again, when the floor (2 s from the start) allows.
        let recheck = try #require(scheduled(done))
        #expect(abs(recheck.after - 1.5) < 1e-9)
        #expect(started(s.timerFired(id: recheck.timer, now: t0 + 2))?.path == routers(dualStack, 2))
    }

    @Test func aNewAddressStillCancelsTheCheck() throws {
        var s = ProbeScheduler(configuration: configuration())
        let check = try #require(started(s.start(path: dualStack, now: t0)))
        var moved = dualStack
        moved.addresses = ["10.77.0.3/24"]
        let actions = s.pathChanged(moved, now: t0 + 0.2)
        #expect(actions.contains(.cancelProbe(id: check.id)))
        #expect(started(actions)?.path == moved)
    }

    /// 200 new routers a second for 30 s while every check takes 300 ms: no check is cancelled,
    /// every check that starts completes, and they start at least 2 s apart.
    @Test func aFloodOfRoutersChecksAtTheFloorAndCancelsNothing() throws {
        let run = try Self.drive(seconds: 30, changesPerSecond: 200, checkTakes: 0.3) { routers(dualStack, $0) }
        #expect(run.cancelled == 0)
        #expect(run.starts.count >= 14 && run.starts.count <= 16, "\(run.starts.count) checks in 30 s")
        #expect(run.published >= run.starts.count - 1)
        for (earlier, later) in zip(run.starts, run.starts.dropFirst()) {
            #expect(later.seconds(since: earlier) >= 2 - 1e-9)
        }
    }

    /// A captive-portal API whose check hangs for its 5 s time-out, its URI changing ten times a
    /// second: each check runs to its end and is published; none is cancelled.
    @Test func aNewerAPIURINeverStarvesTheCheckUnderWay() throws {
        let run = try Self.drive(seconds: 30, changesPerSecond: 10, checkTakes: 5) { announcing(dualStack, "https://10.77.0.1/\($0)") }
        #expect(run.cancelled == 0)
        // 30 s of checks of 5 s each, one after the other (each waits for the floor).
        #expect(run.published >= 5, "\(run.published) verdicts")
    }

    /// Drives a scheduler through `seconds` of path changes (`path(step)`), `changesPerSecond`
    /// of them, each check completing `checkTakes` seconds after it started and every timer
    /// firing when it is due.
    private static func drive(seconds: Int, changesPerSecond: Int, checkTakes: TimeInterval,
                              path: (Int) -> ProbePath) throws -> (starts: [ClockReading], published: Int, cancelled: Int) {
        var s = ProbeScheduler(configuration: configuration())
        var running: (id: Int, since: ClockReading)?
        var due: (timer: Int, at: ClockReading)?
        var starts: [ClockReading] = [], published = 0, cancelledCount = 0
        func take(_ actions: [ProbeScheduler.Action], _ now: ClockReading) {
            for action in actions {
                switch action {
                case .startProbe(let id, _): running = (id, now); starts.append(now)
                case .schedule(let after, let timer): due = (timer, now + after)
                case .cancelTimer: due = nil
                case .cancelProbe: cancelledCount += 1; running = nil
                case .publish: published += 1
                case .reply: break
                }
            }
        }
        take(s.start(path: path(0), now: t0), t0)
        for step in 1...(seconds * changesPerSecond) {
            let now = t0 + Double(step) / Double(changesPerSecond)
            if let timer = due, timer.at.uptime <= now.uptime + 1e-9 {
                due = nil
                take(s.timerFired(id: timer.timer, now: now), now)
            }
            if let check = running, now.seconds(since: check.since) >= checkTakes - 1e-9 {
                running = nil
                take(s.probeCompleted(id: check.id, probe: full(now), now: now), now)
            }
            take(s.pathChanged(path(step), now: now), now)
        }
        return (starts, published, cancelledCount)
    }

    @Test func aVerdictAboutOtherRoutersIsTheVerdictOfThePath() {
        var status = Status.initial(since: t0.wall)
        status.status = .ethernet
        status.reachable = true
        status.ipv4 = true
        status.ipv6 = true
        status.primary = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                                   addresses: ["10.77.0.2/24", "2001:db8:77::2/64"], metered: false)
        status.gateways = routers(dualStack, 9).gateways
        let probe = full(t0)
        let checked = ConnectivityRule.apply(to: status, previous: nil,
                                             verdict: .init(probe: probe, path: routers(dualStack, 1)), now: t0.wall)
        #expect(checked.connectivity == .full)
        var elsewhere = routers(dualStack, 1)
        elsewhere.addresses = ["10.77.0.3/24"]
        let other = ConnectivityRule.apply(to: status, previous: nil, verdict: .init(probe: probe, path: elsewhere), now: t0.wall)
        #expect(other.connectivity == .unknown)
    }

    /// Twelve routers on the primary: eight listed, IPv4 first, each family in address order,
    /// not the order of the routes' metrics; the other four counted.
    @Test func gatewaysAreBounded() {
        let link = LinkState(index: 2, name: "eth0", kind: .ethernet, up: true, carrier: true, operstate: "up")
        var routes = (1...10).map { RouteState(family: .ipv6, gateway: String(format: "fe80::%x", $0 * 16), oif: 2, metric: 1024,
                                               fromRouterAdvertisement: true) }
        routes += [RouteState(family: .ipv4, gateway: "10.77.0.10", oif: 2, metric: 100),
                   RouteState(family: .ipv4, gateway: "10.77.0.9", oif: 2, metric: 100)]
        let snapshot = NetworkSnapshot(links: [2: link],
                                       addresses: [AddressState(ifindex: 2, family: .ipv4, address: "10.77.0.2", prefixLength: 24),
                                                   AddressState(ifindex: 2, family: .ipv6, address: "2001:db8:77::2", prefixLength: 64)],
                                       routes: Set(routes))
        let status = Classifier.classify(snapshot, since: t0.wall)
        #expect(status.reachable && status.ipv6)
        #expect(status.gateways == ["10.77.0.9", "10.77.0.10", "fe80::10", "fe80::20", "fe80::30", "fe80::40", "fe80::50", "fe80::60"])
        #expect(status.gatewaysOmitted == 4)
    }
}
