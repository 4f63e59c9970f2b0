import Foundation
import ReachabilityLinux
import Testing

/// Every saved netlink fuzz input (`fuzz/corpus/netlink`, `fuzz/regressions/netlink`) goes
/// through the datagram splitter and the decoder again: none may crash; `ok-…` seeds decode to changes.
@Suite struct NetlinkFuzzRegressionTests {
    @Test func savedInputs() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../fuzz").standardized.path
        var count = 0
        for directory in ["corpus", "regressions"] {
            let path = "\(root)/\(directory)/netlink"
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() where !name.hasPrefix(".") {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)")))
                let changes = NetlinkFuzzTarget.decode(bytes)
                if name.hasPrefix("ok-") { #expect(changes >= 2, "\(name): \(changes)") }
                count += 1
            }
        }
        #expect(count >= 1)
    }
}
