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
}
