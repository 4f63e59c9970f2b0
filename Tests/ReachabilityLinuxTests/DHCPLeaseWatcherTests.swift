import Foundation
import ReachabilityCore
@testable import ReachabilityLinux
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The lease files as reachd finds them on disk: missing, broken, huge, not files at all; and
/// the watcher's answers as they change (on a real inotify watch of a temp directory).
struct DHCPLeaseWatcherTests {
    private static let metered = "VENDOR_SPECIFIC=" + Array("ANDROID_METERED".utf8).map { String(format: "%02x", $0) }.joined() + "\n"

    @Test func filesThatAreNoLeaseSayWhy() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard case .missing = DHCPLeaseWatcher.load("\(directory)/2") else { Issue.record("missing file"); return }

        try Data(repeating: UInt8(ascii: "A"), count: DHCPLease.maximumSize + 1).write(to: URL(fileURLWithPath: "\(directory)/3"))
        guard case .failed(let huge) = DHCPLeaseWatcher.load("\(directory)/3") else { Issue.record("huge file"); return }
        #expect(huge == "larger than \(DHCPLease.maximumSize) bytes, not a lease file")

        try "VENDOR_SPECIFIC=414e".write(toFile: "\(directory)/4", atomically: true, encoding: .utf8)
        guard case .failed(let truncated) = DHCPLeaseWatcher.load("\(directory)/4") else { Issue.record("truncated"); return }
        #expect(truncated == "truncated: the last line has no end")

        #expect(mkfifo("\(directory)/5", 0o644) == 0)
        guard case .failed(let fifo) = DHCPLeaseWatcher.load("\(directory)/5") else { Issue.record("fifo"); return }
        #expect(fifo == "not a regular file")

        // A link to a file elsewhere is not networkd's lease.
        try Self.metered.write(toFile: "\(directory)/real", atomically: true, encoding: .utf8)
        #expect(symlink("\(directory)/real", "\(directory)/6") == 0)
        guard case .failed(let link) = DHCPLeaseWatcher.load("\(directory)/6") else { Issue.record("symlink"); return }
        #expect(link.hasPrefix("cannot open: "))

        guard case .lease(let lease) = DHCPLeaseWatcher.load("\(directory)/real") else { Issue.record("real lease"); return }
        #expect(lease.isAndroidMetered)
    }

    @Test func answersFollowTheFilesAndABrokenOneChangesNothing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let answers = Recorder<String>(), logs = Recorder<String>()
        let watcher = DHCPLeaseWatcher(directory: directory, log: LogSink(threshold: .info) { _, line in logs.append(line) }) { index, metered in
            answers.append("\(index) \(metered)")
        }
        defer { watcher.stop() }
        // No lease: nothing to say.
        watcher.refresh([7])
        watcher.settle()
        #expect(answers.all.isEmpty)

        // Written in place (IN_CLOSE_WRITE), then renamed over (IN_MOVED_TO), then removed (IN_DELETE).
        try Self.metered.write(toFile: "\(directory)/7", atomically: false, encoding: .utf8)
        #expect(waitUntil(timeout: 5) { answers.all == ["7 true"] }, "\(answers.all)")
        try "{\"Vendor_Specific\":\"4142\"}".write(toFile: "\(directory)/.7.tmp", atomically: false, encoding: .utf8)
        #expect(rename("\(directory)/.7.tmp", "\(directory)/7") == 0)
        #expect(waitUntil(timeout: 5) { answers.all == ["7 true", "7 false"] }, "\(answers.all)")
        try Self.metered.write(toFile: "\(directory)/7", atomically: true, encoding: .utf8)
        #expect(waitUntil(timeout: 5) { answers.count == 3 }, "\(answers.all)")

        // Broken twice: logged once, the answer stays.
        try "{\"Vendor_Specific\":".write(toFile: "\(directory)/7", atomically: true, encoding: .utf8)
        try "{\"Vendor_Specific\":".write(toFile: "\(directory)/7", atomically: true, encoding: .utf8)
        watcher.refresh([7])
        #expect(waitUntil(timeout: 5) { !logs.all.isEmpty })
        watcher.settle()
        #expect(logs.all == ["DHCP lease \(directory)/7: not valid JSON: unexpected end at byte 19; its metered hint is not used"])
        #expect(answers.all == ["7 true", "7 false", "7 true"])

        try FileManager.default.removeItem(atPath: "\(directory)/7")
        #expect(waitUntil(timeout: 5) { answers.all.last == "7 false" }, "\(answers.all)")
        // Names that are not interface indexes (networkd's temporary files) are no link's.
        try Self.metered.write(toFile: "\(directory)/.#7abc", atomically: false, encoding: .utf8)
        // Events come in order: once link 8's lease is answered, the temporary file was seen.
        try Self.metered.write(toFile: "\(directory)/8", atomically: false, encoding: .utf8)
        #expect(waitUntil(timeout: 5) { answers.all.last == "8 true" }, "\(answers.all)")
        #expect(answers.all == ["7 true", "7 false", "7 true", "7 false", "8 true"])
    }
}
