import Foundation
import Testing
@testable import ReachabilityCore

private let url = "http://10.77.0.1/check"
private let at = Date(timeIntervalSince1970: 1_800_000_000)
private let eth = ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.2/24"], gateways: ["10.77.0.1"])
private let wlan = ProbePath(interface: "wlan0", index: 3, addresses: ["192.168.1.20/24"], gateways: ["192.168.1.1"])
private let wwan = ProbePath(interface: "wwan0", index: 4, addresses: ["100.64.0.2/30"], gateways: ["100.64.0.1"])

private func probe(_ result: Connectivity) -> Probe {
    Probe(url: url, result: result, httpStatus: result == .full ? 204 : nil, checkedAt: at)
}

private func scheduler(_ mode: StandbyCheckMode = .unmetered, interval: TimeInterval = 300, standby: TimeInterval? = nil,
                       enabled: Bool = true) -> StandbyScheduler {
    var connectivity = ReachdConfiguration.ConnectivitySection()
    connectivity.enabled = enabled
    connectivity.url = url
    connectivity.intervalSeconds = interval
    connectivity.checkStandby = mode
    connectivity.standbyIntervalSeconds = standby
    return StandbyScheduler(configuration: ProbeScheduler.Configuration(connectivity: connectivity, initialBackoff: 2))
}

private let uplinks = [StandbyUplink(path: wlan, expensive: false), StandbyUplink(path: wwan, expensive: true)]

@Suite struct StandbySchedulerTests {
    /// By default the unmetered standby is checked at once, the cellular one not; the next
    /// check is 5 × Interval later.
    @Test func unmeteredByDefaultAtFiveIntervals() {
        var s = scheduler()
        #expect(s.uplinksChanged(uplinks) == [.startProbe(id: 1, path: wlan)])
        #expect(s.probeCompleted(id: 1, probe: probe(.full)) == [.publish(index: 3, probe(.full)), .schedule(after: 1500, timer: 2)])
        #expect(s.timerFired(id: 2) == [.startProbe(id: 3, path: wlan)])
        #expect(s.uplinksChanged(uplinks) == [])               // nothing new: the running check goes on
    }

    /// A new captive-portal API URI on a standby link (anyone there can announce one with every
    /// router advertisement) starts no check and withdraws no verdict: the next check asks it.
    @Test func aNewAPIURIWaitsForTheNextCheck() {
        var s = scheduler()
        _ = s.uplinksChanged(uplinks)
        _ = s.probeCompleted(id: 1, probe: probe(.full))
        for uri in ["https://a.example/api", "https://b.example/api", "https://a.example/api"] {
            var announced = wlan
            announced.captivePortalApi = uri
            #expect(s.uplinksChanged([StandbyUplink(path: announced, expensive: false)]) == [])
            #expect(s.checked[3] == announced)
        }
        var last = wlan
        last.captivePortalApi = "https://a.example/api"
        #expect(s.timerFired(id: 2) == [.startProbe(id: 3, path: last)])
        // Another change of the path itself is still checked at once.
        var moved = last
        moved.addresses = ["192.168.1.21/24"]
        #expect(s.uplinksChanged([StandbyUplink(path: moved, expensive: false)]) == [.cancelProbe(id: 3), .publish(index: 3, nil), .startProbe(id: 4, path: moved)])
    }

    @Test(arguments: [(StandbyCheckMode.yes, [3, 4]), (.no, []), (.unmetered, [3])])
    func modeDecidesWhichAreChecked(mode: StandbyCheckMode, indexes: [Int]) {
        var s = scheduler(mode)
        _ = s.uplinksChanged(uplinks)
        #expect(s.checked.keys.sorted() == indexes)
    }

    /// `StandbyInterval=` wins; portal and limited back off as the primary's check does.
    @Test func backoffAndExplicitInterval() {
        var s = scheduler(standby: 600)
        _ = s.uplinksChanged(uplinks)
        #expect(s.probeCompleted(id: 1, probe: probe(.limited)).last == .schedule(after: 2, timer: 2))
        _ = s.timerFired(id: 2)
        #expect(s.probeCompleted(id: 3, probe: probe(.portal)).last == .schedule(after: 4, timer: 4))
        _ = s.timerFired(id: 4)
        #expect(s.probeCompleted(id: 5, probe: probe(.full)).last == .schedule(after: 600, timer: 6))
    }

    /// The standby becomes the primary (or loses its route): its check and timer stop and its
    /// verdict is withdrawn; the old primary, now a standby, is checked at once.
    @Test func failoverSwapsWhatIsChecked() {
        var s = scheduler()
        _ = s.uplinksChanged([StandbyUplink(path: wlan, expensive: false)])
        _ = s.probeCompleted(id: 1, probe: probe(.full))
        #expect(s.verdict(index: 3, path: wlan) == probe(.full))
        #expect(s.verdict(index: 3, path: eth) == nil)
        #expect(s.uplinksChanged([StandbyUplink(path: eth, expensive: false)])
                == [.cancelTimer(2), .publish(index: 3, nil), .startProbe(id: 3, path: eth)])
        #expect(s.timerFired(id: 2) == [])
    }

    /// A new path on the same interface (new address) is another network: checked again at once.
    @Test func newPathChecksAgain() {
        var s = scheduler()
        _ = s.uplinksChanged([StandbyUplink(path: wlan, expensive: false)])
        var moved = wlan
        moved.addresses = ["192.168.7.20/24"]
        #expect(s.uplinksChanged([StandbyUplink(path: moved, expensive: false)])
                == [.cancelProbe(id: 1), .startProbe(id: 2, path: moved)])
        #expect(s.probeCompleted(id: 1, probe: probe(.full)) == [])    // stale
    }

    /// The check disabled, or a reload that turns standby checks off: nothing runs, verdicts go.
    @Test func disabledAndReconfigured() {
        var off = scheduler(enabled: false)
        #expect(off.uplinksChanged(uplinks) == [])
        var s = scheduler()
        _ = s.uplinksChanged(uplinks)
        _ = s.probeCompleted(id: 1, probe: probe(.full))
        var none = s.configuration
        none.connectivity.checkStandby = .no
        #expect(s.reconfigure(none, candidates: uplinks) == [.cancelTimer(2), .publish(index: 3, nil)])
        #expect(s.checked.isEmpty)
        var everything = none
        everything.connectivity.checkStandby = .yes
        #expect(s.reconfigure(everything, candidates: uplinks) == [.startProbe(id: 3, path: wlan), .startProbe(id: 4, path: wwan)])
    }
}

/// A data stall on a standby uplink checks it now: its timer cancelled, a check started; none
/// while one runs, none for an uplink not checked.
@Suite struct StandbySchedulerRecheckTests {
    @Test func aRecheckStartsTheUplinksCheckNow() {
        var s = scheduler()
        #expect(s.uplinksChanged(uplinks) == [.startProbe(id: 1, path: wlan)])
        #expect(s.recheck(index: 3) == [], "its check is under way")
        #expect(s.probeCompleted(id: 1, probe: probe(.full)) == [.publish(index: 3, probe(.full)), .schedule(after: 1500, timer: 2)])
        #expect(s.recheck(index: 3) == [.cancelTimer(2), .startProbe(id: 3, path: wlan)])
        #expect(s.recheck(index: 4) == [], "wwan0 is not checked (metered)")
    }
}
