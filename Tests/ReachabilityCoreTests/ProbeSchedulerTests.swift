import Foundation
import Testing
@testable import ReachabilityCore

private let now = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 5_000)
private let url = "http://10.77.0.1/check"
private let eth = ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.2/24"], gateways: ["10.77.0.1"])
private let wlan = ProbePath(interface: "wlan0", index: 3, addresses: ["192.168.1.20/24"], gateways: ["192.168.1.1"])

private func probe(_ result: Connectivity) -> Probe {
    Probe(url: url, result: result, httpStatus: result == .full ? 204 : nil, checkedAt: now.wall)
}
private let none = ProbeVerdict.notReachable(url: url, at: now.wall)

/// A configuration: `[Connectivity]` with these keys, the rest reachd's defaults.
private func settings(enabled: Bool = true, url: String, expectedResponse: String = "", interval: TimeInterval = 300,
                      initialBackoff: TimeInterval = 2, minManualInterval: TimeInterval = 1) -> ProbeScheduler.Configuration {
    var connectivity = ReachdConfiguration.ConnectivitySection()
    connectivity.enabled = enabled
    connectivity.url = url
    connectivity.response = expectedResponse
    connectivity.intervalSeconds = interval
    return ProbeScheduler.Configuration(connectivity: connectivity, probeMinInterval: minManualInterval, initialBackoff: initialBackoff)
}

private func scheduler(enabled: Bool = true, interval: TimeInterval = 300) -> ProbeScheduler {
    ProbeScheduler(configuration: settings(enabled: enabled, url: url, interval: interval, initialBackoff: 2))
}

/// The delays of `.schedule` actions.
private func delays(_ actions: [ProbeScheduler.Action]) -> [TimeInterval] {
    actions.compactMap { if case .schedule(let after, _) = $0 { return after } else { return nil } }
}
private func started(_ actions: [ProbeScheduler.Action]) -> Int? {
    actions.lazy.compactMap { if case .startProbe(let id, _) = $0 { return id } else { return nil } }.first
}
private func timerID(_ actions: [ProbeScheduler.Action]) -> Int? {
    actions.lazy.compactMap { if case .schedule(_, let timer) = $0 { return timer } else { return nil } }.first
}

@Suite struct ProbeSchedulerTests {
    /// A flood of `Probe()` calls makes one check per `minManualInterval`: the others share the
    /// running check, or the last verdict while it is fresh.
    @Test func manualRequestsShareAFreshVerdict() throws {
        var s = ProbeScheduler(configuration: settings(url: url, interval: 300, initialBackoff: 2, minManualInterval: 1))
        _ = s.start(path: eth, now: now)
        #expect(s.probeRequested(1, now: now) == [])                      // shares the check at start
        let done = s.probeCompleted(id: 1, probe: probe(.full), now: now)
        #expect(done.contains(.reply(requests: [1], .probe(probe(.full)))))
        for request in 2...200 {
            let t = now.adding(Double(request) / 1000)                   // 0.2 s of requests
            #expect(s.probeRequested(request, now: t) == [.reply(requests: [request], .probe(probe(.full)))])
        }
        // A second later a request checks again.
        let later = s.probeRequested(201, now: now.adding(1))
        #expect(started(later) != nil)
        #expect(s.probeRequested(202, now: now.adding(1.1)) == [])   // waits for that one
        // A new path never gets the old path's verdict.
        var t = ProbeScheduler(configuration: settings(url: url, interval: 300, initialBackoff: 2, minManualInterval: 1))
        _ = t.start(path: eth, now: now)
        _ = t.probeCompleted(id: 1, probe: probe(.full), now: now)
        let moved = t.pathChanged(wlan, now: now)
        #expect(started(moved) != nil)
        #expect(t.probeRequested(9, now: now) == [])
    }

    @Test func checksAtStartAndThenEveryIntervalWhileFull() throws {
        var s = scheduler()
        let first = s.start(path: eth, now: now)
        #expect(first == [.startProbe(id: 1, path: eth)])
        let afterFull = s.probeCompleted(id: 1, probe: probe(.full), now: now)
        #expect(afterFull == [.publish(probe(.full)), .schedule(after: 300, timer: 2)])
        #expect(s.timerFired(id: 2, now: now) == [.startProbe(id: 3, path: eth)])
        #expect(delays(s.probeCompleted(id: 3, probe: probe(.full), now: now)) == [300])
    }

    /// The backoff table: while portal or limited the retry delay doubles from 2 s up to the interval.
    @Test(arguments: [Connectivity.portal, .limited])
    func backoffDoublesUpToTheInterval(_ result: Connectivity) throws {
        var s = scheduler(interval: 30)
        var id = try #require(started(s.start(path: eth, now: now)))
        var seen: [TimeInterval] = []
        for _ in 0..<7 {
            let actions = s.probeCompleted(id: id, probe: probe(result), now: now)
            seen += delays(actions)
            let timer = try #require(timerID(actions))
            id = try #require(started(s.timerFired(id: timer, now: now)))
        }
        #expect(seen == [2, 4, 8, 16, 30, 30, 30])
        // Logged in: back to the interval, and a later portal starts the backoff afresh.
        #expect(delays(s.probeCompleted(id: id, probe: probe(.full), now: now)) == [30])
        #expect(s.backoff == nil)
    }

    /// A captive-portal API's `seconds-remaining` brings the next check to shortly before the
    /// session ends, when that is sooner than the usual delay; a new path's API is checked at once.
    @Test func sessionTimeLeftBringsTheNextCheckForward() throws {
        var s = scheduler(interval: 300)
        let id = try #require(started(s.start(path: eth, now: now)))
        var session = probe(.full)
        session.secondsRemaining = 3
        let actions = s.probeCompleted(id: id, probe: session, now: now)
        #expect(delays(actions) == [2])
        let timer = try #require(timerID(actions))
        let next = try #require(started(s.timerFired(id: timer, now: now)))
        session.secondsRemaining = 0
        let ended = s.probeCompleted(id: next, probe: session, now: now)
        #expect(delays(ended) == [2])   // not sooner than the first backoff, however often it says 0
        let timer2 = try #require(timerID(ended))
        let third = try #require(started(s.timerFired(id: timer2, now: now)))
        session.secondsRemaining = 4000
        #expect(delays(s.probeCompleted(id: third, probe: session, now: now)) == [300])
        var announced = eth
        announced.captivePortalApi = "https://10.77.0.1:8443/capport"
        // Announced a while after the last check (the network's floor has passed): checked at once.
        #expect(started(s.pathChanged(announced, now: now.adding(10))) != nil)
    }

    @Test func backoffRestartsAfterFull() throws {
        var s = scheduler()
        var id = try #require(started(s.start(path: eth, now: now)))
        var actions = s.probeCompleted(id: id, probe: probe(.portal), now: now)
        #expect(delays(actions) == [2])
        let firstTimer = try #require(timerID(actions))
        id = try #require(started(s.timerFired(id: firstTimer, now: now)))
        actions = s.probeCompleted(id: id, probe: probe(.full), now: now)
        #expect(delays(actions) == [300])
        let secondTimer = try #require(timerID(actions))
        id = try #require(started(s.timerFired(id: secondTimer, now: now)))
        #expect(delays(s.probeCompleted(id: id, probe: probe(.limited), now: now)) == [2])
    }

    @Test func unknownVerdictUsesTheInterval() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        #expect(delays(s.probeCompleted(id: id, probe: probe(.unknown), now: now)) == [300])
    }

    @Test func pathChangeChecksAtOnceAndIgnoresTheStaleResult() throws {
        var s = scheduler()
        let old = try #require(started(s.start(path: eth, now: now)))
        let change = s.pathChanged(wlan, now: now)
        #expect(change == [.cancelProbe(id: old), .startProbe(id: 2, path: wlan)])
        // The old check answers late: ignored, nothing published.
        #expect(s.probeCompleted(id: old, probe: probe(.portal), now: now) == [])
        #expect(s.probeCompleted(id: 2, probe: probe(.full), now: now) == [.publish(probe(.full)), .schedule(after: 300, timer: 3)])
    }

    @Test func pathChangeWhileWaitingCancelsTheTimer() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        let timer = try #require(timerID(s.probeCompleted(id: id, probe: probe(.full), now: now)))
        var moved = eth
        moved.addresses = ["10.77.0.3/24"]
        #expect(s.pathChanged(moved, now: now) == [.cancelTimer, .startProbe(id: timer + 1, path: moved)])
        #expect(s.timerFired(id: timer, now: now) == [])  // the stale timer does nothing
    }

    @Test func samePathIsNotAChange() throws {
        var s = scheduler()
        _ = s.start(path: eth, now: now)
        #expect(s.pathChanged(eth, now: now) == [])
    }

    @Test func notReachablePublishesNoneAtOnceAndDoesNotCheck() throws {
        var s = scheduler()
        #expect(s.start(path: nil, now: now) == [.publish(none)])
        #expect(s.timerFired(id: 1, now: now) == [])
        let id = try #require(started(s.pathChanged(eth, now: now)))
        let timer = try #require(timerID(s.probeCompleted(id: id, probe: probe(.full), now: now)))
        #expect(s.pathChanged(nil, now: now) == [.cancelTimer, .publish(none)])
        #expect(s.timerFired(id: timer, now: now) == [])
    }

    @Test func notReachableWhileCheckingCancelsIt() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        #expect(s.pathChanged(nil, now: now) == [.cancelProbe(id: id), .publish(none)])
        #expect(s.probeCompleted(id: id, probe: probe(.limited), now: now) == [])
    }

    @Test func reachableAgainClearsNoneBeforeChecking() throws {
        var s = scheduler()
        _ = s.start(path: nil, now: now)
        // "none" with a reachable status would be wrong: not checked yet (unknown) until the check answers.
        #expect(s.pathChanged(eth, now: now) == [.publish(nil), .startProbe(id: 1, path: eth)])
    }

    /// Someone sets the date an hour ahead, then two hours back: no time has passed for the
    /// scheduler. The verdict stays fresh for manual requests (no extra HTTP request), a path it
    /// already has starts nothing, and the next check is still one interval after the last;
    /// only time on the clock that never steps makes the verdict stale.
    @Test func wallClockStepChangesNothing() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        #expect(delays(s.probeCompleted(id: id, probe: probe(.full), now: now)) == [300])
        var request = 10
        for step in [3600.0, -3600.0] {
            let stepped = now.adding(0.5).steppingWall(by: step)
            #expect(s.pathChanged(eth, now: stepped) == [])
            #expect(s.probeRequested(request, now: stepped) == [.reply(requests: [request], .probe(probe(.full)))])
            request += 1
        }
        #expect(s.inFlight == nil)
        #expect(s.timer == 2)
        // A second of real time later (the wall clock still an hour behind), a request checks again.
        #expect(started(s.probeRequested(request, now: now.adding(1).steppingWall(by: -3600))) != nil)
    }

    @Test func manualRequestStartsACheckAndReschedules() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        let timer = try #require(timerID(s.probeCompleted(id: id, probe: probe(.full), now: now)))
        let manual = s.probeRequested(7, now: now.adding(60))
        #expect(manual == [.cancelTimer, .startProbe(id: timer + 1, path: eth)])
        let done = s.probeCompleted(id: timer + 1, probe: probe(.portal), now: now)
        #expect(done == [.publish(probe(.portal)), .reply(requests: [7], .probe(probe(.portal))), .schedule(after: 2, timer: timer + 2)])
    }

    @Test func manualRequestsCoalesceWithTheRunningCheck() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        #expect(s.probeRequested(1, now: now) == [])
        #expect(s.probeRequested(2, now: now) == [])
        let done = s.probeCompleted(id: id, probe: probe(.full), now: now)
        #expect(done.contains(.reply(requests: [1, 2], .probe(probe(.full)))))
        #expect(started(done) == nil)
    }

    @Test func manualRequestSurvivesAPathChange() throws {
        var s = scheduler()
        let old = try #require(started(s.start(path: eth, now: now)))
        _ = s.probeRequested(1, now: now)
        let new = try #require(started(s.pathChanged(wlan, now: now)))
        #expect(s.probeCompleted(id: old, probe: probe(.full), now: now) == [])
        #expect(s.probeCompleted(id: new, probe: probe(.limited), now: now).contains(.reply(requests: [1], .probe(probe(.limited)))))
    }

    @Test func manualRequestWhileNotReachableAnswersNone() {
        var s = scheduler()
        _ = s.start(path: nil, now: now)
        #expect(s.probeRequested(4, now: now) == [.reply(requests: [4], .probe(none))])
    }

    @Test func waitingRequestIsAnsweredWhenTheMachineGoesOffline() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        _ = s.probeRequested(5, now: now)
        #expect(s.pathChanged(nil, now: now) == [.cancelProbe(id: id), .publish(none), .reply(requests: [5], .probe(none))])
    }

    @Test func disabledPublishesUnknownAndAnswersDisabled() {
        var s = scheduler(enabled: false)
        #expect(s.start(path: eth, now: now) == [.publish(nil)])
        #expect(s.pathChanged(wlan, now: now) == [])
        #expect(s.pathChanged(nil, now: now) == [])
        #expect(s.probeRequested(1, now: now) == [.reply(requests: [1], .disabled)])
        #expect(s.timerFired(id: 1, now: now) == [])
    }

    @Test func reconfigureDisableAndEnable() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        _ = s.probeRequested(9, now: now)
        let off = s.reconfigure(settings(enabled: false, url: url), now: now)
        #expect(off == [.cancelProbe(id: id), .reply(requests: [9], .disabled), .publish(nil)])
        let on = s.reconfigure(settings(enabled: true, url: "http://10.77.0.1/other"), now: now)
        #expect(on == [.startProbe(id: id + 1, path: eth)])
        #expect(s.reconfigure(settings(enabled: true, url: "http://10.77.0.1/other"), now: now) == [])
        // A new Response= makes the running check's verdict stale.
        let response = s.reconfigure(settings(enabled: true, url: "http://10.77.0.1/other", expectedResponse: "ok"), now: now)
        #expect(response == [.cancelProbe(id: id + 1), .startProbe(id: id + 2, path: eth)])
    }

    /// A new Timeout= or request rate is no reason to check again: the running check goes on.
    @Test func aNewTimeoutOrRateAloneLeavesTheRunningCheck() throws {
        var s = scheduler()
        _ = try #require(started(s.start(path: eth, now: now)))
        var slower = settings(url: url, minManualInterval: 5)
        slower.connectivity.timeoutSeconds = 30
        #expect(s.reconfigure(slower, now: now) == [])
        var otherURL = slower
        otherURL.connectivity.url = "http://10.77.0.1/other"
        #expect(s.reconfigure(otherURL, now: now) != [])
    }

    @Test func stopCancelsEverything() throws {
        var s = scheduler()
        let id = try #require(started(s.start(path: eth, now: now)))
        _ = s.probeRequested(3, now: now)
        #expect(s.stop() == [.cancelProbe(id: id), .reply(requests: [3], .disabled)])
        #expect(s.probeCompleted(id: id, probe: probe(.full), now: now) == [])
    }

    @Test func pathFromStatus() {
        var status = Status.initial(since: Date())
        #expect(ProbePath(status) == nil)
        let iface = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                              addresses: ["10.77.0.2/24", "fd00::2/64"], metered: false)
        status.reachable = true
        status.primary = iface
        status.gateways = ["10.77.0.1"]
        let path = ProbePath(status)
        #expect(path?.interface == "eth0")
        #expect(path?.sourceAddresses == ["10.77.0.2", "fd00::2"])
        // Connectivity, probe and flags are not part of the path.
        var probed = status
        probed.connectivity = .full
        probed.probe = probe(.full)
        #expect(ProbePath(probed) == path)
    }
}

/// A data stall's `recheck`: a check now whatever the last one said; one under way (begun
/// before the stall) is followed by another; a `Probe()` right after waits for the new check.
@Suite struct ProbeSchedulerRecheckTests {
    @Test func aRecheckChecksNowOrRightAfterTheCheckUnderWay() throws {
        var s = scheduler()
        let first = try #require(started(s.start(path: eth, now: now)))
        let done = s.probeCompleted(id: first, probe: probe(.full), now: now.adding(1))
        #expect(delays(done) == [300])
        // Idle, the last check a second old: a recheck starts one at once, cancelling the timer.
        let again = s.recheck(now: now.adding(2))
        #expect(again.contains(.cancelTimer))
        let second = try #require(started(again))
        // While it runs: no second check at once, but one right after it.
        #expect(s.recheck(now: now.adding(3)).isEmpty)
        #expect(started(s.probeCompleted(id: second, probe: probe(.limited), now: now.adding(4))) != nil)
        // A manual request is not answered from the check before the recheck.
        var t = scheduler()
        let id = try #require(started(t.start(path: eth, now: now)))
        _ = t.probeCompleted(id: id, probe: probe(.full), now: now.adding(1))
        let checked = try #require(started(t.recheck(now: now.adding(1.5))))
        #expect(t.probeRequested(7, now: now.adding(1.6)).isEmpty, "waits for the recheck")
        let answered = t.probeCompleted(id: checked, probe: probe(.limited), now: now.adding(2))
        #expect(answered.contains(.reply(requests: [7], .probe(probe(.limited)))))
        // Nothing to check: nothing done.
        var off = scheduler(enabled: false)
        _ = off.start(path: eth, now: now)
        #expect(off.recheck(now: now.adding(1)).isEmpty)
    }
}
