import Foundation
import Testing
import TestSupport

extension SystemTests {
/// The test harness's delay line and traffic loop against the real kernel: the RTT it is set
/// to is what ping and the kernel's srtt measure, loss loses, and the line can change while
/// traffic crosses it. The bounds are wide (±25 %): a loaded 2-core machine delays the
/// forwarding thread; docs/testing.md has the quiet calibration (within 2 %).
@Suite struct DelayLineTests {
    @Test(.needsRoot("creates network namespaces and tun devices")) func rttLossAndChangesWhileRunning() throws {
        let host = try TestNamespace(tag: "dlh"), network = try TestNamespace(tag: "dln")
        defer { host.destroy(); network.destroy() }
        let line = try DelayLine(host: host, network: network, settings: DelayLine.Settings(rtt: 0.4), seed: 50)
        defer { line.stop() }

        let echoes = try ping(from: host, to: line.remoteAddress, count: 8, interval: 0.2, timeout: 2)
        #expect(echoes.lossPercent == 0, "\(echoes)")
        let average = try #require(echoes.average)
        #expect(abs(average - 0.4) <= 0.1, "ping \(echoes.rtts)")

        let loop = try TrafficLoop(through: line)
        defer { loop.stop() }
        #expect(loop.waitForProgress(6, timeout: 30), "\(loop.statistics)")
        let srtt = try #require(loop.kernelRTT?.smoothed)
        #expect(abs(srtt - 0.4) <= 0.1, "srtt \(srtt)")
        let exchange = try #require(loop.statistics.lastExchangeTime)
        #expect(abs(exchange - 0.4) <= 0.1, "exchange \(exchange)")

        // Shorter while traffic runs: the kernel's srtt follows.
        line.rtt = 0.05
        #expect(waitUntil(timeout: 30) { (loop.kernelRTT?.smoothed ?? 1) < 0.1 }, "srtt \(loop.kernelRTT as Any)")

        // Loss: each packet lost with probability 1/2 each way, so 3 echoes in 4; of 40, all lost
        // once in 10⁵ runs.
        line.loss = 0.5
        let lossy = try ping(from: host, to: line.remoteAddress, count: 40, interval: 0.05, timeout: 1)
        #expect(lossy.lossPercent > 0 && lossy.lossPercent < 100, "\(lossy)")
        let statistics = line.statistics
        #expect(statistics.lostUp + statistics.lostDown > 0, "\(statistics)")
        line.loss = 0
        let clean = try ping(from: host, to: line.remoteAddress, count: 5, interval: 0.05, timeout: 1)
        #expect(clean.lossPercent == 0, "\(clean)")

        // Stopped: the two namespaces have no other way to each other, and the devices are gone.
        loop.stop()
        line.stop()
        let cut = try ping(from: host, to: line.remoteAddress, count: 2, interval: 0.05, timeout: 0.5)
        #expect(cut.received == 0)
        #expect(!(try host.ip("link show")).contains(line.hostDevice))
    }

    /// A rate limit holds bulk traffic near its rate.
    @Test(.needsRoot("creates network namespaces and tun devices")) func rateLimitsBulkTraffic() throws {
        let host = try TestNamespace(tag: "drh"), network = try TestNamespace(tag: "drn")
        defer { host.destroy(); network.destroy() }
        let line = try DelayLine(host: host, network: network, settings: DelayLine.Settings(rtt: 0.02, rateKbps: 2000), seed: 3)
        defer { line.stop() }
        let loop = try TrafficLoop(through: line, mode: .bulk)
        defer { loop.stop() }
        #expect(loop.waitForProgress(64, timeout: 10))
        let before = loop.statistics.receivedBytes, began = Date()
        Thread.sleep(forTimeInterval: 2)
        let kbps = Double(loop.statistics.receivedBytes - before) * 8 / 1000 / Date().timeIntervalSince(began)
        #expect(kbps > 1000 && kbps < 2400, "\(kbps) kbit/s through a 2000 kbit/s line")
    }
}
}
