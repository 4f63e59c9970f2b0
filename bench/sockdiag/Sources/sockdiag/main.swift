// sockdiag [--dumps N] [--pause SECONDS] [--settle SECONDS] [--limit SOCKETS] [--label TEXT]: runs N dumps of
// the passive quality sampler in the current network namespace, each handed to a LinkQualityEstimator as the
// monitor would, and prints one line: the CPU (user + system, all threads) per dump, the sockets listed and
// read and the samples of the last dump, and the resident memory added: at its peak, right after the dumps,
// and SECONDS later (--settle).
// sockdiag --once: one dump after a baseline, printed (the unprivileged check).
// sockdiag --book SOCKETS: no kernel: SOCKETS synthetic records (20 users, 2 uplinks, every socket moving
// data) through PassiveSampleBook 2,000 times, with the data-stall tallies (tcpi_segs_in present) and
// without (absent, as from a kernel before 4.2), then DataStallDetector on each dump's tallies; prints the
// CPU per dump of each and the difference: what data-stall detection adds to a dump.
import Foundation
import ReachabilityCore
import ReachabilityLinux

/// User and system CPU seconds of the whole process.
func cpuSeconds() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return (Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1_000_000,
            Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1_000_000)
}

/// A line of /proc/self/status in KiB (VmRSS, VmHWM).
func statusKiB(_ key: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

var dumps = 200
var label = ""
var once = false
var book = 0
var pause = 0.0
var settle = 0.0
var limit = SockDiagSelection.defaultLimit
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--dumps": dumps = Int(arguments.next() ?? "") ?? dumps
    case "--label": label = arguments.next() ?? ""
    case "--once": once = true
    case "--book": book = Int(arguments.next() ?? "") ?? 2000
    case "--pause": pause = Double(arguments.next() ?? "") ?? pause
    case "--settle": settle = Double(arguments.next() ?? "") ?? settle
    case "--limit": limit = Int(arguments.next() ?? "") ?? limit
    default:
        FileHandle.standardError.write("usage: sockdiag [--dumps N] [--pause SECONDS] [--settle SECONDS] [--limit SOCKETS] [--label TEXT] [--once]\n".data(using: .utf8)!)
        exit(2)
    }
}

if book > 0 {
    /// `count` sockets of 20 users to public peers, their counters at dump `round`: every socket
    /// moves data, one in ten retransmits.
    func records(_ count: Int, round: Int, segmentsIn: Bool) -> [SockDiagRecord] {
        (0..<count).map { i in
            let step = UInt32(round)
            let info = TCPInfo(rttMicroseconds: 40_000, totalRetransmits: i % 10 == 0 ? step : 0, bytesAcked: UInt64(round) * 1000,
                               bytesReceived: UInt64(round) * 4000, segmentsOut: step * 12, minRttMicroseconds: 30_000,
                               segmentsIn: segmentsIn ? step * 10 : nil, consecutiveTimeouts: 0, lastAckReceivedMs: 20)
            return SockDiagRecord(family: .ipv4, source: AddressBits(bytes: [10, 0, 0, 2]), sourcePort: UInt16(1024 + i % 60_000),
                                  destination: AddressBits(bytes: [198, 51, UInt8(i % 2), UInt8(1 + i % 250)]), destinationPort: 443,
                                  cookie: UInt64(i + 1), uid: UInt32(1000 + i % 20), info: info)
        }
    }
    let rounds = 2000
    func run(segmentsIn: Bool) -> (seconds: Double, tallies: Int) {
        // Built beforehand: only the book's work is timed.
        let inputs = (0..<8).map { records(book, round: $0 + 1, segmentsIn: segmentsIn) }
        var sampleBook = PassiveSampleBook()
        var detector = DataStallDetector()
        let uplinks = [DataStallDetector.Uplink(index: 2, expensive: false), DataStallDetector.Uplink(index: 3, expensive: false)]
        var tallies = 0
        let start = cpuSeconds()
        for round in 0..<rounds {
            let dump = sampleBook.record(inputs[round % 8], uptime: Double(round) * 10, ownPrefixes: [:],
                                         uplink: { query in query.destination.high >> 40 & 0xff == 0 ? 2 : 3 })
            tallies = dump.stalls.count
            if segmentsIn {
                _ = detector.dumped(dump.stalls, uplinks: uplinks, interval: dump.interval,
                                    now: ClockReading(wall: Date(timeIntervalSince1970: 0), uptime: dump.uptime))
            }
        }
        let end = cpuSeconds()
        return ((end.user + end.system - start.user - start.system) / Double(rounds), tallies)
    }
    let without = run(segmentsIn: false), with = run(segmentsIn: true)
    let without2 = run(segmentsIn: false), with2 = run(segmentsIn: true)
    let a = min(without.seconds, without2.seconds), b = min(with.seconds, with2.seconds)
    print(String(format: "%@book %d sockets: %.1f µs per dump without stall tallies, %.1f µs with them and the detector "
                 + "(%d uplinks): +%.1f µs (+%.1f %%)", label, book, a * 1e6, b * 1e6, with.tallies, (b - a) * 1e6, (b / a - 1) * 100))
    exit(0)
}

let errors = LogSink(threshold: .debug) { _, message in FileHandle.standardError.write("sockdiag: \(message)\n".data(using: .utf8)!) }
if once {
    let sampler = PassiveQualitySampler(log: errors)
    guard sampler.sampleNow() != nil else { print("sockdiag: baseline dump failed"); exit(1) }
    Thread.sleep(forTimeInterval: 1)
    guard let dump = sampler.sampleNow() else { print("sockdiag: dump failed"); exit(1) }
    let samples = dump.samples.flatMap { $0.value }
    print("uid \(getuid()): \(sampler.cacheSizes.sockets) sockets, \(samples.count) samples on \(dump.samples.keys.sorted())"
          + (samples.first.map { String(format: ", rtt %.3f ms, %d bytes received", $0.rttMs, Int($0.bytesReceived ?? 0)) } ?? ""))
    exit(0)
}

let before = statusKiB("VmRSS")
let sampler = PassiveQualitySampler(log: errors, socketLimit: limit)
_ = sampler.sampleNow()   // baseline: socket, buffer, caches
// What the monitor does with each dump: the estimator takes it (uplinks as they appear).
var estimator = LinkQualityEstimator()
var samples = 0
var failed = 0
let start = cpuSeconds()
for _ in 0..<dumps {
    if let dump = sampler.sampleNow() {
        samples = dump.samples.values.reduce(0) { $0 + $1.count }
        let now = ClockReading(wall: Date(), uptime: dump.uptime)
        for index in dump.samples.keys where estimator.quality(for: index) == nil {
            estimator.linkUp(QualityUplink(index: index, name: "if\(index)", technology: .init(kind: .ethernet)), now: now)
        }
        _ = estimator.measured(dump, now: now)
    } else {
        failed += 1
    }
    if pause > 0 { Thread.sleep(forTimeInterval: pause) }   // sleeping costs no CPU
}
let end = cpuSeconds()
let userPerDump = (end.user - start.user) / Double(dumps) * 1000, systemPerDump = (end.system - start.system) / Double(dumps) * 1000
let after = statusKiB("VmRSS")
let peak = statusKiB("VmHWM")
let counts = sampler.lastDumpSockets
let sizes = sampler.cacheSizes
var line = String(format: "%@: %.1f ms CPU per dump (%.1f user, %.1f system; %d dumps%@), %d sockets listed, %d read, %d samples in the last, %d tracked, %d routes cached; resident +%d KiB (peak +%d)",
                  label, userPerDump + systemPerDump, userPerDump, systemPerDump, dumps, failed > 0 ? ", \(failed) failed" : "", counts.listed, counts.read, samples,
                  sizes.sockets, sizes.routes, after - before, peak - before)
if settle > 0 {
    Thread.sleep(forTimeInterval: settle)
    line += String(format: ", +%d KiB %.0f s later", statusKiB("VmRSS") - before, settle)
}
print(line)
