import Foundation
import Testing
@testable import ReachabilityCore

/// Router advertisement options as the wire has them: type, length in 8-octet units, body.
enum RA {
    static func option(_ type: Int, _ body: [UInt8]) -> [UInt8] {
        var bytes = [UInt8(type), 0] + body
        while bytes.count % 8 != 0 { bytes.append(0) }
        bytes[1] = UInt8(bytes.count / 8)
        return bytes
    }
    static func u32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }
    static func address(_ text: String) -> [UInt8] { HostName.ipv6Bytes(text) ?? [] }
    static func rdnss(_ servers: [String], lifetime: UInt32) -> [UInt8] {
        option(25, [0, 0] + u32(lifetime) + servers.flatMap(address))
    }
    static func dnssl(_ domains: [String], lifetime: UInt32) -> [UInt8] {
        var names: [UInt8] = []
        for name in domains {
            for label in name.split(separator: ".") { names += [UInt8(label.utf8.count)] + Array(label.utf8) }
            names.append(0)
        }
        return option(31, [0, 0] + u32(lifetime) + names)
    }
    static func captivePortal(_ uri: String) -> [UInt8] { option(37, Array(uri.utf8)) }
    static func pref64(_ prefix: String, code: UInt16, lifetime: UInt16) -> [UInt8] {
        let word = (lifetime / 8) << 3 | code
        return [38, 2, UInt8(word >> 8), UInt8(word & 0xff)] + Array(address(prefix).prefix(12))
    }
}

@Suite struct RouterOptionParserTests {
    private func parse(_ bytes: [UInt8]) -> [Result<RouterOption, RouterOptionError>] {
        RouterOptionParser.parse(bytes, ifindex: 2)
    }

    private func content(_ bytes: [UInt8]) -> (RouterOption.Content, UInt32?)? {
        guard let first = parse(bytes).first, case .success(let option) = first else { return nil }
        return (option.content, option.lifetime)
    }

    private func problem(_ bytes: [UInt8]) -> String? {
        guard let first = parse(bytes).first, case .failure(let error) = first else { return nil }
        return error.problem
    }

    @Test func wellFormedOptions() throws {
        let rdnss = try #require(content(RA.rdnss(["2001:db8::53", "2001:db8:0:1::53"], lifetime: 600)))
        #expect(rdnss.0 == .dnsServers(["2001:db8::53", "2001:db8:0:1::53"]) && rdnss.1 == 600)
        let dnssl = try #require(content(RA.dnssl(["corp.example", "example"], lifetime: UInt32.max)))
        #expect(dnssl.0 == .searchDomains(["corp.example", "example"]) && dnssl.1 == UInt32.max)
        let portal = try #require(content(RA.captivePortal("https://portal.example/api")))
        #expect(portal.0 == .captivePortal("https://portal.example/api") && portal.1 == nil)
        let unrestricted = try #require(content(RA.captivePortal(RouterOption.unrestricted)))
        #expect(unrestricted.0 == .captivePortal(RouterOption.unrestricted))
        let pref96 = try #require(content(RA.pref64("64:ff9b::", code: 0, lifetime: 1800)))
        #expect(pref96.0 == .nat64Prefix("64:ff9b::/96") && pref96.1 == 1800)
        // Bits past a /64 are ignored.
        let pref64 = try #require(content(RA.pref64("2001:db8:1:2:ffff::", code: 1, lifetime: 600)))
        #expect(pref64.0 == .nat64Prefix("2001:db8:1:2::/64"))
    }

    @Test func unknownOptionsAreSkippedAndSeveralAreRead() {
        let bytes = RA.option(24, [64, 0] + RA.u32(100)) + RA.rdnss(["2001:db8::1"], lifetime: 5) + RA.captivePortal("https://a.example/")
        let results = parse(bytes)
        #expect(results.count == 2)
        #expect(results.allSatisfy { if case .success = $0 { return true } else { return false } })
    }

    /// Every malformed option is an error naming its problem; none is read as something else.
    @Test(arguments: [
        ([25, 2] + [UInt8](repeating: 0, count: 14), "is not 8 + 16 per address"),     // RDNSS without a whole address
        ([25, 0, 0, 0], "length 0"),
        ([25, 4] + [UInt8](repeating: 0, count: 6), "exceeds"),                       // longer than the bytes received
        ([25], "truncated header"),
        (RA.option(31, [0, 0] + RA.u32(60) + [70] + [UInt8](repeating: 97, count: 70)), "at most 63"),
        (RA.option(31, [0, 0] + RA.u32(60) + [3, 0x61, 0xff, 0x62, 0]), "not letters"),
        (RA.option(31, [0, 0] + RA.u32(60) + [7] + [UInt8](repeating: 0x61, count: 7)), "terminating zero"),
        (RA.option(31, [0, 0] + RA.u32(60)), "leaves no room"),
        (RA.option(37, [0x68, 0x74, 0xff, 0xfe]), "not UTF-8"),
        (RA.option(37, Array("https://a.example/\u{1b}[2J".utf8)), "control characters"),
        (RA.option(37, Array("http://portal.example/api".utf8)), "neither an https URL"),
        (RA.option(37, Array(("https://portal.example/" + String(repeating: "a", count: 1977)).utf8)), "URI of 2000 bytes"),
        (RA.option(37, []), "empty URI"),
        ([38, 3] + [UInt8](repeating: 0, count: 22), "length 24, not 16"),
        ([38, 2, 0, 7] + [UInt8](repeating: 0, count: 12), "prefix length code 7"),
    ] as [([UInt8], String)])
    func malformedOptionsAreRefused(bytes: [UInt8], expected: String) throws {
        let found = try #require(problem(bytes))
        #expect(found.contains(expected), "\(found)")
    }

    @Test(arguments: [
        ([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1], "2001:db8::1"),
        ([UInt8](repeating: 0, count: 16), "::"),
        ([0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], "1:0:0:1::1"),
        ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1], "::ffff:192.0.2.1"),
        ([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4], "fe80::1:2:3:4"),
        ([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8], "1:2:3:4:5:6:7:8"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0], "2001:db8:0:1::"),
    ] as [([UInt8], String)])
    func ipv6TextFollowsRFC5952(bytes: [UInt8], text: String) {
        #expect(RouterOptionParser.ipv6Text(bytes) == text)
    }
}

@Suite struct RouterAnnouncementsTests {
    private func option(_ content: RouterOption.Content, lifetime: UInt32?, at time: Double, index: Int = 2) -> RouterOption {
        RouterOption(ifindex: index, content: content, lifetime: lifetime, receivedAt: time)
    }

    @Test func lifetimesExpireAndZeroWithdraws() {
        var own = RouterAnnouncements()
        let changed1 = own.apply(option(.dnsServers(["2001:db8::53"]), lifetime: 10, at: 100))
        #expect(changed1)
        let changed2 = own.apply(option(.searchDomains(["example"]), lifetime: 30, at: 100))
        #expect(changed2)
        let changed3 = own.apply(option(.nat64Prefix("64:ff9b::/96"), lifetime: 20, at: 100))
        #expect(changed3)
        #expect(own.nextDeadline == 110)
        // A refresh moves the deadline but shows nothing new.
        let changed4 = own.apply(option(.dnsServers(["2001:db8::53"]), lifetime: 10, at: 105))
        #expect(!changed4)
        #expect(own.nextDeadline == 115)
        let changed5 = own.expire(now: 114)
        #expect(!changed5)
        let changed6 = own.expire(now: 115)
        #expect(changed6)
        #expect(own.dnsServers.isEmpty && own.searchDomains == ["example"] && own.nat64Prefix == "64:ff9b::/96")
        let changed7 = own.apply(option(.nat64Prefix("64:ff9b::/96"), lifetime: 0, at: 116))
        #expect(changed7)
        #expect(own.nat64Prefix == nil)
        let changed8 = own.expire(now: 130)
        #expect(changed8 && own.isEmpty && own.nextDeadline == nil)
    }

    /// An infinite lifetime never runs out; the portal's URI, which has no lifetime of its own,
    /// lasts `captivePortalLifetime` after it was last announced (anyone on the link can send one).
    @Test func infiniteLifetimeNeverExpiresAndThePortalAges() {
        var own = RouterAnnouncements()
        own.apply(option(.dnsServers(["2001:db8::1"]), lifetime: UInt32.max, at: 0))
        #expect(own.nextDeadline == nil)
        own.apply(option(.captivePortal("https://p.example/api"), lifetime: nil, at: 0))
        #expect(own.nextDeadline == RouterAnnouncements.captivePortalLifetime)
        let changed9 = own.expire(now: RouterAnnouncements.captivePortalLifetime - 1)
        #expect(!changed9)
        #expect(own.captivePortal == "https://p.example/api")
        let changed10 = own.apply(option(.captivePortal(RouterOption.unrestricted), lifetime: nil, at: 1))
        #expect(changed10)
        #expect(own.captivePortal == nil)
        own.apply(option(.captivePortal("https://p.example/api"), lifetime: nil, at: 2))
        let changed11 = own.expire(now: 2 + RouterAnnouncements.captivePortalLifetime)
        #expect(changed11 && own.captivePortal == nil && own.dnsServers == ["2001:db8::1"])
    }

    @Test func listsAreBoundedAndTheNewestPrefixWins() {
        var own = RouterAnnouncements()
        for i in 0..<20 { own.apply(option(.dnsServers(["2001:db8::\(i)"]), lifetime: 60, at: 0)) }
        #expect(own.dnsServers.count == RouterOptionParser.maxServers && own.dnsServers.last == "2001:db8::19")
        own.apply(option(.nat64Prefix("64:ff9b::/96"), lifetime: 60, at: 0))
        own.apply(option(.nat64Prefix("2001:db8:64::/96"), lifetime: 60, at: 1))
        #expect(own.nat64Prefix == "2001:db8:64::/96")
        own.apply(option(.nat64Prefix("64:ff9b::/96"), lifetime: 60, at: 2))
        #expect(own.nat64Prefix == "64:ff9b::/96")
    }

    @Test func theTableKeepsThemPerLinkAndDropsThemWithTheNetwork() {
        let eth0 = LinkFacts(index: 2, name: "eth0", up: true, carrier: true, operstate: "up")
        var table = KernelStateTable([.link(eth0)])
        var touched: Set<Int> = [], contents: Set<Int> = []
        table.apply(.routerOption(option(.dnsServers(["2001:db8::53"]), lifetime: 5, at: 10)), touching: &touched, contents: &contents)
        #expect(touched == [2] && contents == [2])
        // An option for a link the table does not know is dropped.
        table.apply(.routerOption(option(.dnsServers(["2001:db8::99"]), lifetime: 5, at: 10, index: 9)))
        #expect(table.announcements.keys.sorted() == [2])
        #expect(table.nextAnnouncementDeadline == 15)

        let slice = table.slice(at: 2, kind: .ethernet, metered: false, ignored: false)
        #expect(slice.interface?.dns == ["2001:db8::53"])

        touched = []; contents = []
        table.expireAnnouncements(now: 15, touching: &touched, contents: &contents)
        #expect(table.announcements.isEmpty && touched == [2])

        table.apply(.routerOption(option(.captivePortal("https://p.example/"), lifetime: nil, at: 20)))
        var fresh = KernelStateTable([.link(eth0)])
        fresh.adoptAnnouncements(from: table)
        #expect(fresh.announcements == table.announcements)
        // Carrier lost: maybe another network next; what this one announced goes.
        table.apply(.link(LinkFacts(index: 2, name: "eth0", up: true, carrier: false, operstate: "down")))
        #expect(table.announcements.isEmpty)
    }

    /// The interface shows what was announced, the path carries the API, and the event names it.
    @Test func statusAndEventCarryTheAnnouncements() throws {
        let eth0 = LinkFacts(index: 2, name: "eth0", up: true, carrier: true, operstate: "up")
        var table = KernelStateTable([.link(eth0),
                                      .addressAdded(AddressState(ifindex: 2, family: .ipv4, address: "10.0.0.2", prefixLength: 24)),
                                      .routeAdded(RouteState(family: .ipv4, gateway: "10.0.0.1", oif: 2, metric: 100), replace: false)])
        var tracker = StatusTracker(snapshot: table.snapshot(kinds: [2: .ethernet]), now: Date())
        table.apply(.routerOption(option(.captivePortal("https://p.example/api"), lifetime: nil, at: 1)))
        table.apply(.routerOption(option(.dnsServers(["2001:db8::53"]), lifetime: 60, at: 1)))
        table.apply(.routerOption(option(.nat64Prefix("64:ff9b::/96"), lifetime: 60, at: 1)))
        let action = tracker.update(slices: [table.slice(at: 2, kind: .ethernet, metered: false, ignored: false)], now: Date())
        guard case .emit(let event) = action else { Issue.record("no event"); return }
        #expect(event.reason.code == .routerAdvertisement && event.reason.interface == "eth0")
        #expect(event.reason.detail == "captive portal API https://p.example/api, DNS 2001:db8::53, NAT64 prefix 64:ff9b::/96")
        let primary = try #require(event.current.primary)
        #expect(primary.captivePortalApi == "https://p.example/api" && primary.dns == ["2001:db8::53"])
        #expect(primary.nat64Prefix == "64:ff9b::/96" && primary.searchDomains.isEmpty)
        #expect(ProbePath(event.current)?.captivePortalApi == "https://p.example/api")
        #expect(event.changes.contains("primary") && event.changes.contains("interfaces"))
        // The whole-snapshot path agrees with the incremental one.
        #expect(Classifier.classify(table.snapshot(kinds: [2: .ethernet]), since: event.current.since).primary == primary)
    }
}

@Suite struct CaptivePortalAPITests {
    private func state(_ json: String) -> Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure> {
        CaptivePortalAPI.state(json: Array(json.utf8))
    }

    @Test func theRFCsExample() throws {
        let said = try state("""
            {"captive": true, "user-portal-url": "https://example.org/portal.html",
             "venue-info-url": "https://flight.example.com/entertainment",
             "seconds-remaining": 326, "bytes-remaining": 65536, "can-extend-session": true}
            """).get()
        #expect(said == CaptivePortalAPI.State(captive: true, userPortalUrl: "https://example.org/portal.html",
                                               venueInfoUrl: "https://flight.example.com/entertainment",
                                               canExtendSession: true, secondsRemaining: 326, bytesRemaining: 65536))
    }

    /// Fields of the wrong type or URLs that are not https are left out; the verdict stands.
    @Test func badOptionalFieldsAreLeftOut() throws {
        let said = try state(#"{"captive": false, "user-portal-url": "http://plain.example/", "venue-info-url": 7,"#
                             + #" "seconds-remaining": -5, "bytes-remaining": "many", "can-extend-session": "yes"}"#).get()
        #expect(said == CaptivePortalAPI.State(captive: false))
    }

    @Test(arguments: [
        ("", "not JSON"), ("<html>login</html>", "not JSON"), ("[true]", "not a JSON object"),
        ("{}", "no \"captive\""), (#"{"captive": "true"}"#, "not true or false"), (#"{"captive": 1}"#, "not true or false"),
        (String(repeating: "[", count: 5000), "nested deeper than 8 levels"),
        (#"{"captive": true, "captive": false}"#, "duplicate key"),
        (#"{"captive": true} trailing"#, "bytes after the value"),
        (#"{"captive": false, "x": ""# + String(repeating: "a", count: 20_000) + #""}"#, "longer than"),
    ] as [(String, String)])
    func brokenAnswers(json: String, expected: String) {
        guard case .failure(let failure) = state(json) else { Issue.record("accepted \(json.prefix(40))"); return }
        #expect(failure.message.contains(expected), "\(failure.message)")
    }

    @Test func httpAnswers() {
        let ok = HTTPResponse(status: 200, body: Array(#"{"captive":false}"#.utf8))
        #expect((try? CaptivePortalAPI.state(of: ok).get()) == CaptivePortalAPI.State(captive: false))
        let notFound = HTTPResponse(status: 404, body: Array(#"{"captive":false}"#.utf8))
        #expect(throws: CaptivePortalAPI.Failure.self) { try CaptivePortalAPI.state(of: notFound).get() }
        let cut = HTTPResponse(status: 200, body: Array(#"{"captive":false}"#.utf8), bodyTruncated: true)
        #expect(throws: CaptivePortalAPI.Failure.self) { try CaptivePortalAPI.state(of: cut).get() }
    }

    @Test func verdicts() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let api = "https://10.0.0.1:8443/capport"
        let said = CaptivePortalAPI.State(captive: true, userPortalUrl: "https://10.0.0.1/login", secondsRemaining: 0)
        let portal = CaptivePortalAPI.portal(said, api: api, rttMs: 3, checkedAt: now)
        #expect(portal.result == .portal && portal.portalUrl == "https://10.0.0.1/login" && portal.source == "ra" && portal.url == api)

        let full = Probe(url: "http://10.0.0.1/check", result: .full, httpStatus: 204, checkedAt: now)
        let merged = CaptivePortalAPI.merge(.success(CaptivePortalAPI.State(captive: false, secondsRemaining: 720, bytesRemaining: 10)),
                                            api: api, into: full)
        #expect(merged.result == .full && merged.secondsRemaining == 720 && merged.bytesRemaining == 10 && merged.source == "ra")
        let fallback = CaptivePortalAPI.merge(.failure(CaptivePortalAPI.Failure("answer is not JSON")), api: api, into: full)
        #expect(fallback.result == .full && fallback.source == nil)
        #expect(fallback.error == "captive-portal API https://10.0.0.1:8443/capport not used: answer is not JSON")
    }

    @Test(arguments: [(3, 2.0), (0, 0.5), (1, 0.5), (100, 90.0), (720, 660.0), (86400, 86340.0)] as [(Int, Double)])
    func recheckBeforeTheSessionEnds(seconds: Int, delay: Double) {
        #expect(CaptivePortalAPI.recheckDelay(secondsRemaining: seconds) == delay)
    }
}
