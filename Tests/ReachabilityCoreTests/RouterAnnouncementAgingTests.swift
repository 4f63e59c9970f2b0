import Testing
@testable import ReachabilityCore

/// The captive-portal URI ages with the advertisements of the router that sent it: gone when that
/// router's next advertisement comes without it, or `captivePortalLifetime` after it was last
/// announced; another router's advertisements leave it alone.
@Suite struct RouterAnnouncementAgingTests {
    private static let router = "fe80::1", other = "fe80::2"
    private static let uri = "https://10.77.0.1:8443/capport"

    enum Sent: Sendable, CustomStringConvertible {
        /// One advertisement: its options, from `router`, at `at`.
        case advertisement([RouterOption.Content], from: String?, at: Double)
        case expire(at: Double)
        var description: String {
            switch self {
            case .advertisement(let contents, let router, let at): return "\(contents) from \(router ?? "?") at \(at)"
            case .expire(let at): return "expire at \(at)"
            }
        }
    }

    private static let portal = RouterOption.Content.captivePortal(uri)
    private static let dns = RouterOption.Content.dnsServers(["2001:db8::53"])

    @Test(arguments: [
        ("refreshed by its router", [Sent.advertisement([portal, dns], from: router, at: 0), .advertisement([portal, dns], from: router, at: 600),
                                     .expire(at: 2000)], uri as String?),
        ("its router's next advertisement lacks it", [.advertisement([portal, dns], from: router, at: 0),
                                                      .advertisement([dns], from: router, at: 10), .expire(at: 10.5)], nil),
        ("the order of options does not matter", [.advertisement([dns, portal], from: router, at: 0),
                                                  .advertisement([dns], from: router, at: 10), .expire(at: 10.5)], nil),
        ("judged only once the advertisement is over", [.advertisement([portal, dns], from: router, at: 0),
                                                        .advertisement([dns], from: router, at: 10), .expire(at: 10.4)], uri),
        ("another router's advertisements leave it", [.advertisement([portal], from: router, at: 0),
                                                      .advertisement([dns], from: other, at: 10), .expire(at: 100)], uri),
        ("its lifetime ends", [.advertisement([portal], from: router, at: 0), .expire(at: 1799)], uri),
        ("its lifetime ends", [.advertisement([portal], from: router, at: 0), .expire(at: 1800)], nil),
        ("no router known: the lifetime", [.advertisement([portal], from: nil, at: 0), .advertisement([dns], from: nil, at: 10),
                                           .expire(at: 1800)], nil),
        ("a flood of one router's URIs keeps the newest", [.advertisement([.captivePortal(uri + "/a")], from: router, at: 0),
                                                           .advertisement([.captivePortal(uri)], from: router, at: 0.01),
                                                           .expire(at: 1)], uri),
        ("taken over by another router", [.advertisement([portal], from: router, at: 0),
                                          .advertisement([.captivePortal(uri + "/b")], from: other, at: 5),
                                          .advertisement([dns], from: router, at: 10), .expire(at: 11)], uri + "/b"),
    ] as [(String, [Sent], String?)])
    func theURIAges(_ name: String, sent: [Sent], remaining: String?) {
        var own = RouterAnnouncements()
        for step in sent {
            switch step {
            case .advertisement(let contents, let router, let at):
                for (offset, content) in contents.enumerated() {
                    // One advertisement's options arrive microseconds apart.
                    own.apply(RouterOption(ifindex: 2, content: content, lifetime: content == Self.portal ? nil : 600,
                                           receivedAt: at + Double(offset) * 1e-5, router: router))
                }
            case .expire(let at):
                own.expire(now: at)
            }
        }
        #expect(own.captivePortal == remaining, "\(name): \(sent)")
    }

    /// The deadline the monitor arms its timer for: the judgement of an advertisement without the
    /// URI comes `advertisementGap` after its last option.
    @Test func theDeadlineIncludesTheJudgement() {
        var own = RouterAnnouncements()
        own.apply(RouterOption(ifindex: 2, content: Self.portal, lifetime: nil, receivedAt: 0, router: Self.router))
        #expect(own.nextDeadline == RouterAnnouncements.captivePortalLifetime)
        own.apply(RouterOption(ifindex: 2, content: Self.dns, lifetime: 600, receivedAt: 10, router: Self.router))
        #expect(own.nextDeadline == 10 + RouterAnnouncements.advertisementGap)
        let changed = own.expire(now: 10 + RouterAnnouncements.advertisementGap)
        #expect(changed && own.captivePortal == nil)
    }

    /// 20,000 advertisements from as many routers: the routers followed stay bounded.
    @Test func theRoutersFollowedAreBounded() {
        var own = RouterAnnouncements()
        for step in 0..<20_000 {
            own.apply(RouterOption(ifindex: 2, content: .dnsServers(["2001:db8::\(String(step % 60_000, radix: 16))"]), lifetime: 600,
                                   receivedAt: Double(step), router: "fe80::\(String(step, radix: 16))"))
        }
        #expect(own.followedRouters <= 8 && own.dnsServers.count <= 8)
    }
}

/// The router lifetime: when the kernel removes the default route via the router that announced
/// the URI, the URI goes; another router's route leaves it.
@Suite struct RouterLifetimeAgingTests {
    private func table(portalFrom router: String) -> KernelStateTable {
        var table = KernelStateTable()
        table.apply(.link(LinkFacts(index: 2, name: "eth0", up: true, carrier: true, loopback: false, operstate: "up")))
        table.apply(.routerOption(RouterOption(ifindex: 2, content: .captivePortal("https://p.example/api"), lifetime: nil,
                                               receivedAt: 1, router: router)))
        return table
    }

    private func defaultRoute(via gateway: String) -> RouteState {
        RouteState(family: .ipv6, table: RouteState.mainTable, destination: nil, prefixLength: 0, gateway: gateway, oif: 2,
                   metric: 1024, type: .unicast)
    }

    @Test(arguments: [("fe80::1", nil as String?), ("fe80::2", "https://p.example/api")])
    func theDefaultRouteGoes(removedVia gateway: String, remaining: String?) {
        var table = table(portalFrom: "fe80::1")
        table.apply(.routeAdded(defaultRoute(via: gateway), replace: false))
        #expect(table.announcements[2]?.captivePortal == "https://p.example/api")
        var touched: Set<Int> = [], contents: Set<Int> = []
        table.apply(.routeRemoved(defaultRoute(via: gateway)), touching: &touched, contents: &contents)
        #expect(table.announcements[2]?.captivePortal == remaining)
        #expect(touched == [2] && contents == [2])
    }
}
