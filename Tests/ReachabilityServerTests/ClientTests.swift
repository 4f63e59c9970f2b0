import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import TestSupport
import Testing

@Suite struct SocketPathTests {
    @Test(arguments: [
        // (explicit, REACHD_SOCKET, XDG_RUNTIME_DIR, existing files, expected)
        ("/tmp/x", "/env/s", "/run/user/1", ["/run/reachd/io.reachd.Reachability"], "/tmp/x"),
        (nil, "/env/s", "/run/user/1", ["/run/reachd/io.reachd.Reachability"], "/env/s"),
        (nil, nil, "/run/user/1", ["/run/reachd/io.reachd.Reachability"], "/run/reachd/io.reachd.Reachability"),
        (nil, nil, "/run/user/1", ["/run/user/1/reachd/io.reachd.Reachability"], "/run/user/1/reachd/io.reachd.Reachability"),
        (nil, nil, "/run/user/1", [], "/run/reachd/io.reachd.Reachability"),
        (nil, nil, nil, [], "/run/reachd/io.reachd.Reachability"),
        (nil, "", nil, [], "/run/reachd/io.reachd.Reachability"),
    ] as [(String?, String?, String?, [String], String)])
    func resolution(explicit: String?, env: String?, xdg: String?, existing: [String], expected: String) {
        var environment: [String: String] = [:]
        environment["REACHD_SOCKET"] = env
        environment["XDG_RUNTIME_DIR"] = xdg
        #expect(ReachabilitySocketPath.resolve(explicit: explicit, environment: environment, exists: { existing.contains($0) }) == expected)
    }
}

@Suite struct StatusSummaryTests {
    @Test func lines() {
        var status = Fixture.status(reachable: true, connectivity: .full)
        #expect(status.summary == "online · ethernet (eth1) · internet: full · IPv4")
        status.ipv6 = true; status.expensive = true
        status.vpn = Fixture.interface("tun0", index: 9)
        #expect(status.summary == "online · vpn tun0 over ethernet (eth1) · internet: full · IPv4 + IPv6 · expensive")
        #expect(Fixture.status(reachable: false).summary == "offline")
    }

    /// Behind a portal that a captive-portal API described: where to log in, and the session's
    /// time counted down from the check; the verbose line lists what the network announces.
    @Test func captivePortalLines() {
        let checked = Date(timeIntervalSince1970: 1_800_000_000)
        var status = Fixture.status(reachable: true, connectivity: .portal)
        status.probe = Probe(url: "https://10.0.0.1:8443/capport", result: .portal, httpStatus: 200, portalUrl: "https://10.0.0.1/login",
                             checkedAt: checked, venueInfoUrl: "https://10.0.0.1/venue", secondsRemaining: 900, source: "ra")
        #expect(status.summary(now: checked.addingTimeInterval(180)) == "online · ethernet (eth1) · internet: portal · log in at https://10.0.0.1/login · 12 min left · IPv4")
        #expect(status.summary(now: checked.addingTimeInterval(5000)) == "online · ethernet (eth1) · internet: portal · log in at https://10.0.0.1/login · 0 s left · IPv4")
        status.probe?.secondsRemaining = 9000
        status.probe?.bytesRemaining = 3 << 19
        #expect(status.summary(now: checked) == "online · ethernet (eth1) · internet: portal · log in at https://10.0.0.1/login · 2 h 30 min left, 1.5 MB left · IPv4")
        #expect(status.probe?.summary == "internet: portal · HTTP 200 · log in at https://10.0.0.1/login · 2 h 30 min left, 1.5 MB left · https://10.0.0.1:8443/capport")
        #expect(status.announcementLine == "eth1 announces: venue https://10.0.0.1/venue")
        status.primary?.dns = ["2001:db8::53"]
        status.primary?.searchDomains = ["corp.example"]
        status.primary?.nat64Prefix = "64:ff9b::/96"
        status.primary?.captivePortalApi = "https://10.0.0.1:8443/capport"
        #expect(status.announcementLine == "eth1 announces: DNS 2001:db8::53 · search corp.example · NAT64 64:ff9b::/96 · captive-portal API https://10.0.0.1:8443/capport · venue https://10.0.0.1/venue")
    }

    @Test func waitCondition() {
        let online = Fixture.status(reachable: true, connectivity: .limited)
        #expect(online.satisfies(internet: false, interface: nil))
        #expect(!online.satisfies(internet: true, interface: nil))
        #expect(online.satisfies(internet: false, interface: "eth2"))
        #expect(!online.satisfies(internet: false, interface: "wlan0"))
        #expect(!Fixture.status(reachable: false).satisfies(internet: false, interface: nil))
    }

    /// With the check off (`[Connectivity] Enabled=no`) `unknown` is for good: the summary says
    /// so, and `wait --internet` (each family's too) takes a reachable path as online.
    @Test func checkOff() {
        var status = Fixture.status(reachable: true, connectivity: .unknown)
        status.ipv4Connectivity = .unknown
        #expect(status.summary == "online · ethernet (eth1) · internet: unknown · IPv4")
        #expect(!status.satisfies(internet: true, interface: nil))
        status.connectivityCheck = false
        #expect(status.summary == "online · ethernet (eth1) · internet: not checked · IPv4")
        #expect(status.satisfies(internet: true, interface: nil))
        #expect(status.satisfies(internet: true, interface: nil, family: .ipv4))
        #expect(!status.satisfies(internet: true, interface: nil, family: .ipv6))
        #expect(!status.satisfies(internet: true, interface: "wlan0"))
        var offline = Fixture.status(reachable: false)
        offline.connectivityCheck = false
        #expect(offline.summary == "offline")
        #expect(!offline.satisfies(internet: true, interface: nil))
    }

    /// The families' verdicts when they differ, and a failure at the resolver.
    @Test func familyLines() {
        var status = Fixture.status(reachable: true, connectivity: .full)
        status.ipv6 = true
        status.ipv4Connectivity = .full; status.ipv6Connectivity = .full
        #expect(status.summary == "online · ethernet (eth1) · internet: full · IPv4 + IPv6")
        status.ipv6Connectivity = .limited
        #expect(status.summary == "online · ethernet (eth1) · internet: full (IPv6: limited) · IPv4 + IPv6")
        status.ipv4Connectivity = .limited; status.ipv6Connectivity = .full
        #expect(status.summary == "online · ethernet (eth1) · internet: full (IPv4: limited) · IPv4 + IPv6")
        // A family that says nothing is not named: never checked (an address-literal URL checks
        // its own family alone), or without a path (the end of the line says which have one).
        status.ipv4Connectivity = .full; status.ipv6Connectivity = .unknown
        #expect(status.summary == "online · ethernet (eth1) · internet: full · IPv4 + IPv6")
        status.ipv6 = false; status.ipv6Connectivity = .none
        #expect(status.summary == "online · ethernet (eth1) · internet: full · IPv4")
        status.ipv6 = true
        status.connectivity = .limited; status.ipv4Connectivity = .limited; status.ipv6Connectivity = .limited
        status.probe = Probe(url: "http://check.test/", result: .limited, error: "timed out", checkedAt: Date(), failedStage: .resolve)
        #expect(status.summary == "online · ethernet (eth1) · internet: limited (DNS) · IPv4 + IPv6")
        // Not checked yet (or checks off) on an IPv4-only network: no verdict to set IPv6 against.
        status.ipv6 = false
        status.connectivity = .unknown; status.ipv4Connectivity = .unknown; status.ipv6Connectivity = .none
        status.probe = nil
        #expect(status.summary == "online · ethernet (eth1) · internet: unknown · IPv4")
    }

    /// `wait --family`: that family's path, and with `--internet` its own verdict.
    @Test func waitForOneFamily() {
        var status = Fixture.status(reachable: true, connectivity: .full)
        status.ipv6 = true
        status.ipv4Connectivity = .full; status.ipv6Connectivity = .limited
        #expect(status.satisfies(internet: true, interface: nil))
        #expect(status.satisfies(internet: true, interface: nil, family: .ipv4))
        #expect(!status.satisfies(internet: true, interface: nil, family: .ipv6))
        #expect(status.satisfies(internet: false, interface: nil, family: .ipv6))
        status.ipv6 = false
        #expect(!status.satisfies(internet: false, interface: nil, family: .ipv6))
    }

    @Test func deduplicator() {
        var d = EventDeduplicator()
        let s = Fixture.status(reachable: true)
        func event(_ n: Int, _ kind: ReachabilityEvent.Kind = .reachabilityChanged, _ reason: Reason.Code = .linkUp) -> ReachabilityEvent {
            ReachabilityEvent(sequence: n, timestamp: Date(), event: kind, reason: Reason(code: reason), previous: nil, current: s)
        }
        let steps: [(ReachabilityEvent, Bool)] = [
            (event(10, .initial, .initial), true), (event(11), true), (event(11), false), (event(9), false),
            (event(12), true), (event(5, .initial, .resync), true), (event(6), true), (event(6, .initial, .initial), false),
        ]
        for (i, (e, expected)) in steps.enumerated() { #expect(d.admit(e) == expected, "step \(i)") }
    }
}

@Suite struct ClientTests {
    @Test func statusAndCallsThroughTheClient() async throws {
        let h = try ServerHarness()
        let client = ReachabilityClient(socketPath: h.path)
        #expect(try await client.status() == h.status)
        let info = try await client.call(method: "org.varlink.service.GetInfo")
        #expect(info.parameters["vendor"] == .string("reachd"))
        await #expect(throws: ReachabilityClientError.remote(.probeDisabled)) {
            try await client.call(method: "io.reachd.Reachability.Probe")
        }
    }

    @Test func daemonNotRunning() async throws {
        let directory = try temporaryDirectory()
        let client = ReachabilityClient(socketPath: directory + "/none")
        await #expect(throws: ReachabilityClientError.daemonNotRunning(socketPath: directory + "/none")) { try await client.status() }
        var iterator = client.events().makeAsyncIterator()
        await #expect(throws: ReachabilityClientError.daemonNotRunning(socketPath: directory + "/none")) { _ = try await iterator.next() }
    }

    /// The server goes away and a new one (a restarted daemon) comes on the same path: the
    /// stream reconnects, resumes by sequence number, and yields each event once.
    @Test func eventsSurviveAServerRestart() async throws {
        let h = try ServerHarness(sequence: 100)
        let client = ReachabilityClient(socketPath: h.path)
        var iterator = client.events().makeAsyncIterator()
        #expect(try await iterator.next()?.sequence == 100)
        let first = h.publishChange()
        #expect(try await iterator.next() == first)

        // A server restart that kept the history (same numbering): the missed events are replayed.
        h.server.stop()
        let second = ReachabilityServer(initial: Fixture.initial(sequence: 101, status: first.current))
        let missed = Fixture.change(sequence: 102, from: first.current, to: Fixture.status(reachable: false))
        second.publish(missed)
        try second.listen(at: h.path)
        #expect(try await iterator.next() == missed)
        second.stop()

        // A restart with fresh numbering: a resync initial, then live events, no duplicates.
        let third = ReachabilityServer(initial: Fixture.initial(sequence: 5000, status: missed.current))
        try third.listen(at: h.path)
        let resync = try await iterator.next()
        #expect(resync?.event == .initial && resync?.reason.code == .resync && resync?.sequence == 5000)
        let live = Fixture.change(sequence: 5001, from: missed.current, to: Fixture.status(reachable: true))
        third.publish(live)
        #expect(try await iterator.next() == live)
        third.stop()
    }
}
