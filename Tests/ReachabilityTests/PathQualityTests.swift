import Foundation
import Reachability
import ReachabilityCore
import Testing

/// `Path.linkQuality`, `Path.effectiveType` and the measured generation of the seeds' API.
@Suite struct PathQualityTests {
    static func status(reachable: Bool, quality: LinkQuality?) -> ReachabilityCore.Status {
        let wwan0 = Interface(name: "wwan0", index: 3, kind: .wwan, up: true, carrier: true, operstate: "up",
                              addresses: ["10.1.0.2/24"], metered: true, linkQuality: quality)
        var status = ReachabilityCore.Status(status: reachable ? .wwan4G : .notReachable, reachable: reachable,
                                             connectivity: reachable ? .full : .none, primary: reachable ? wwan0 : nil, vpn: nil,
                                             cellular: nil, expensive: true, ipv4: reachable, ipv6: false, gateways: [],
                                             flags: reachable ? [.reachable] : [], interfaces: [wwan0], probe: nil,
                                             since: Date(timeIntervalSince1970: 0))
        status.linkQuality = reachable ? quality : nil
        return status
    }

    @Test func aFourGModemMeasuredAsTwoG() throws {
        let measured = LinkQuality(level: .minimal, effectiveType: .twoG, rttMs: 1500, samples: 8, source: .passive,
                                   measuredAt: Date(timeIntervalSince1970: 0))
        let path = Path(Self.status(reachable: true, quality: measured))
        #expect(path.networkStatus == .wwan4G)
        #expect(path.linkQuality == .minimal)
        #expect(path.effectiveType == .twoG)
        #expect(path.quality?.rttMs == 1500)
        #expect(path.description.hasSuffix("quality: minimal (2g, 1500 ms)"))
        #expect(NetworkStatus(measured: try #require(path.effectiveType)) == .wwan2G)
    }

    @Test func unknownUntilMeasuredAndWhenUnsatisfied() {
        let unmeasured = Path(Self.status(reachable: true, quality: nil))
        #expect(unmeasured.linkQuality == .unknown && unmeasured.effectiveType == nil && unmeasured.quality == nil)
        let offline = Path(Self.status(reachable: false, quality: LinkQuality(level: .good, effectiveType: .fourG, source: .probe,
                                                                              measuredAt: Date(timeIntervalSince1970: 0))))
        #expect(offline.linkQuality == .unknown && offline.effectiveType == nil)
    }

    @Test(arguments: [
        (LinkQuality.EffectiveType.slow2g, NetworkStatus.wwan2G), (.twoG, .wwan2G), (.threeG, .wwan3G), (.fourG, .wwan4G),
    ])
    func measuredGeneration(_ type: LinkQuality.EffectiveType, _ expected: NetworkStatus) {
        #expect(NetworkStatus(measured: type) == expected)
    }
}
