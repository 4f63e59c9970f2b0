// sockdiag [--dumps N] [--pause SECONDS] [--settle SECONDS] [--limit SOCKETS] [--label TEXT]: runs N dumps of
// the passive quality sampler in the current network namespace, each handed to a LinkQualityEstimator as the
// monitor would, and prints one line: the CPU (user + system, all threads) per dump, the sockets listed and
// read and the samples of the last dump, and the resident memory added: at its peak, right after the dumps,
// and SECONDS later (--settle).
// sockdiag --once: one dump after a baseline, printed (the unprivileged check).
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
var pause = 0.0
var settle = 0.0
var limit = SockDiagSelection.defaultLimit
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--dumps": dumps = Int(arguments.next() ?? "") ?? dumps
    case "--label": label = arguments.next() ?? ""
    case "--once": once = true
    case "--pause": pause = Double(arguments.next() ?? "") ?? pause
    case "--settle": settle = Double(arguments.next() ?? "") ?? settle
    case "--limit": limit = Int(arguments.next() ?? "") ?? limit
    default:
        FileHandle.standardError.write("usage: sockdiag [--dumps N] [--pause SECONDS] [--settle SECONDS] [--limit SOCKETS] [--label TEXT] [--once]\n".data(using: .utf8)!)
        exit(2)
    }
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
