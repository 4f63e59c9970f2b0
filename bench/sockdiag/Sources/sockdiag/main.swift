// sockdiag [--dumps N] [--pause SECONDS] [--label TEXT]: runs N dumps of the passive quality sampler in the
// current network namespace and prints one line: the CPU (user + system, all threads) per dump,
// the sockets and samples of the last dump, and the resident memory the sampler added.
// sockdiag --once: one dump after a baseline, printed (the unprivileged check).
import Foundation
import ReachabilityCore
import ReachabilityLinux

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
}

func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

var dumps = 200
var label = ""
var once = false
var pause = 0.0
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--dumps": dumps = Int(arguments.next() ?? "") ?? dumps
    case "--label": label = arguments.next() ?? ""
    case "--once": once = true
    case "--pause": pause = Double(arguments.next() ?? "") ?? pause
    default: FileHandle.standardError.write("usage: sockdiag [--dumps N] [--pause SECONDS] [--label TEXT] [--once]\n".data(using: .utf8)!); exit(2)
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

let before = residentKiB()
let sampler = PassiveQualitySampler(log: errors)
_ = sampler.sampleNow()   // baseline: socket, buffer, caches
var samples = 0
let start = cpuSeconds()
for _ in 0..<dumps {
    samples = sampler.sampleNow()?.samples.values.reduce(0) { $0 + $1.count } ?? -1
    if pause > 0 { Thread.sleep(forTimeInterval: pause) }   // sleeping costs no CPU
}
let perDump = (cpuSeconds() - start) / Double(dumps) * 1000
let after = residentKiB()
let sizes = sampler.cacheSizes
print(String(format: "%@: %.2f ms CPU per dump (%d dumps), %d sockets, %d samples in the last, %d routes cached, +%d KiB resident",
             label, perDump, dumps, sizes.sockets, samples, sizes.routes, after - before))
