import Foundation
import Reachability
import Testing
@testable import OfflineBannerExample

/// How an app tests its own reaction to the network: a `SimulatedNetwork` as the source — no
/// reachd, no root, no real network change.
@Suite struct OfflineBannerTests {
    @Test func showsTheBannerForEachNetwork() async throws {
        let network = SimulatedNetwork(.wifi)
        let banner = OfflineBanner(reachability: try Reachability(source: .simulated(network)))
        let (changes, continuation) = AsyncStream.makeStream(of: String?.self)
        banner.onChange = { continuation.yield($0) }
        try banner.start()
        defer { banner.stop() }
        var texts = changes.makeAsyncIterator()

        #expect(await texts.next() == .some(nil))                        // on Wi-Fi: no banner
        network.set(.notReachable)
        #expect(await texts.next() == "You are offline")
        network.set(.wwan2G)
        #expect(await texts.next() == "Slow connection: images are off")
        network.set(.wifi, connectivity: .portal)
        #expect(await texts.next() == "Sign in to the network")
    }
}
