import Foundation
import ReachabilityClient
import ReachabilityCore
import Testing
@testable import reachctl

/// What `reachctl status`, `status --verbose` and `monitor` make of a data stall.
@Suite struct DataStallOutputTests {
    static let since = Date(timeIntervalSince1970: 1_800_000_000)
    static let stall = DataStall(since: since, method: .tcp, failRate: 0.958, sentSinceReceive: 48, periodMs: 10_000)

    static func link(_ name: String, _ index: Int, _ kind: InterfaceKind, stall: DataStall? = nil,
                     connectivity: Connectivity? = nil) -> Interface {
        Interface(name: name, index: index, kind: kind, up: true, carrier: true, operstate: "up",
                  addresses: ["10.0.\(index).2/24"], metered: false, connectivity: connectivity, stall: stall)
    }

    /// eth0 the primary (stalled or not), wwan0 a checked standby (stalled or not), and wg0 on top when `vpn`.
    static func status(primary: DataStall?, standby: DataStall? = nil, vpn: DataStall? = nil, withVPN: Bool = false) -> Status {
        let eth0 = link("eth0", 2, .ethernet, stall: primary)
        let wwan0 = link("wwan0", 3, .wwan, stall: standby, connectivity: .limited)
        let wg0 = link("wg0", 9, .vpn, stall: vpn)
        return Status(status: .ethernet, reachable: true, connectivity: .full, primary: eth0, vpn: withVPN ? wg0 : nil,
                      cellular: nil, expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.2.1"], flags: [.reachable],
                      interfaces: withVPN ? [eth0, wwan0, wg0] : [eth0, wwan0], probe: nil, since: since,
                      ipv4Connectivity: .full)
    }

    @Test func summarySaysHowLongThePathHasStalledAfterTheVerdict() {
        let now = Self.since.addingTimeInterval(12.7)
        #expect(Self.status(primary: Self.stall).summary(now: now)
            == "online · ethernet (eth0) · internet: full · stalled 12 s (tcp, 96 % retransmitted) · IPv4")
        // The VPN's stall is the path's too.
        #expect(Self.status(primary: nil, vpn: Self.stall, withVPN: true).summary(now: now)
            == "online · vpn wg0 over ethernet (eth0) · internet: full · stalled 12 s (tcp, 96 % retransmitted) · IPv4")
        // A standby's stall is not the path's; no stall, nothing said.
        #expect(!Self.status(primary: nil, standby: Self.stall).summary(now: now).contains("stalled"))
        #expect(Style(enabled: false).summary(Self.status(primary: Self.stall), now: Self.since)
            .contains("internet: full · stalled 0 s (tcp, 96 % retransmitted)"))
    }

    /// The dumps that showed the stall follow its figures, oldest first.
    @Test func verboseShowsTheDumpsThatShowedTheStall() {
        var stall = Self.stall
        stall.recent = [DataStall.Dump(at: Self.since.addingTimeInterval(-10), periodMs: 10_000, sent: 30, received: 4, retransmitted: 2),
                        DataStall.Dump(at: Self.since, periodMs: 10_020, sent: 24, received: 0, retransmitted: 23)]
        let lines = Self.status(primary: stall).uplinkLines(now: Self.since)
        let figures = lines.firstIndex { $0.hasPrefix("  stall: ") } ?? lines.count
        #expect(Array(lines.dropFirst(figures + 1).prefix(2)) == [
            "    07:59:50 · 10 s · sent 30 · received 4 · retransmitted 2",
            "    08:00:00 · 10 s · sent 24 · received 0 · retransmitted 23",
        ], "\(lines)")
    }

    @Test func verboseShowsEachStalledUplinkWithTheStallsFigures() {
        let lines = Self.status(primary: Self.stall, standby: Self.stall).uplinkLines(now: Self.since.addingTimeInterval(12))
        #expect(lines == [
            "uplink eth0 (ethernet) · primary · internet: full · stalled 12 s (tcp, 96 % retransmitted)",
            "  stall: 48 segments sent since one was received · 95.8 % retransmitted · dumps 10 s apart"
                + " · since 2027-01-15T08:00:00.000Z (12 s ago)",
            "uplink wwan0 (wwan) · standby · internet: limited · stalled 12 s (tcp, 96 % retransmitted)",
            "  stall: 48 segments sent since one was received · 95.8 % retransmitted · dumps 10 s apart"
                + " · since 2027-01-15T08:00:00.000Z (12 s ago)",
        ])
        // A stalled VPN is listed as the path's, not as a standby; one not stalled, checked nor measured is not listed.
        let vpn = Self.status(primary: nil, vpn: DataStall(since: Self.since, method: .tcp, failRate: 1, sentSinceReceive: 1,
                                                           periodMs: 9_870), withVPN: true)
        #expect(vpn.uplinkLines(now: Self.since) == [
            "uplink eth0 (ethernet) · primary · internet: full",
            "uplink wwan0 (wwan) · standby · internet: limited",
            "uplink wg0 (vpn) · vpn · stalled 0 s (tcp, 100 % retransmitted)",
            "  stall: 1 segment sent since one was received · 100 % retransmitted · dumps 9.9 s apart"
                + " · since 2027-01-15T08:00:00.000Z (just now)",
        ])
        #expect(Self.status(primary: nil).uplinkLines(now: Self.since).allSatisfy { !$0.contains("stall") })
    }

    static func event(_ reason: Reason, _ current: Status, at seconds: Double) -> ReachabilityEvent {
        ReachabilityEvent(sequence: 47, timestamp: since.addingTimeInterval(seconds), event: .reachabilityChanged, reason: reason,
                          previous: nil, current: current, changes: [.interfaces, .primary])
    }

    @Test func monitorLinesOfDataStallEventsSayWhatStalled() {
        let style = Style(enabled: false)
        // The path's stall is in the status, counted to the event's time (a replay reads as it did).
        #expect(style.monitorLine(Self.event(Reason(code: .dataStall, interface: "eth0"), Self.status(primary: Self.stall), at: 0))
            == "2027-01-15T08:00:00.000Z #47 dataStall eth0 [interfaces,primary]: online · ethernet (eth0) · internet: full"
            + " · stalled 0 s (tcp, 96 % retransmitted) · IPv4")
        // A standby's comes first, with its own verdict; then its end.
        #expect(style.monitorLine(Self.event(Reason(code: .dataStall, interface: "wwan0"),
                                             Self.status(primary: nil, standby: Self.stall), at: 30))
            == "2027-01-15T08:00:30.000Z #47 dataStall wwan0 [interfaces,primary]: wwan0 (standby) internet: limited,"
            + " stalled 30 s (tcp, 96 % retransmitted); online · ethernet (eth0) · internet: full · IPv4")
        #expect(style.monitorLine(Self.event(Reason(code: .dataStall, interface: "wwan0"), Self.status(primary: nil), at: 40))
            .hasSuffix(": wwan0 (standby) internet: limited, not stalled; online · ethernet (eth0) · internet: full · IPv4"))
        // Other reasons are as they were.
        #expect(style.monitorLine(Self.event(Reason(code: .carrierGained, interface: "wwan0"), Self.status(primary: nil), at: 0))
            == "2027-01-15T08:00:00.000Z #47 carrierGained wwan0 [interfaces,primary]: online · ethernet (eth0) · internet: full · IPv4")
        // An interface name from the network reaches the terminal escaped.
        var hostile = Self.status(primary: nil, standby: Self.stall)
        hostile.interfaces[1].name = "ww\u{1b}[31m"
        let line = style.monitorLine(Self.event(Reason(code: .dataStall, interface: "ww\u{1b}[31m"), hostile, at: 0))
        #expect(!line.unicodeScalars.contains("\u{1b}") && line.contains("ww\\x1b[31m (standby)"))
    }
}
