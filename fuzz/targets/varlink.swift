// libFuzzer entry point (make fuzz): varlink input as raw bytes.
// Fuzzed for time as well as for crashes: an input that would take a release build more than a
// millisecond per KiB (at least one millisecond) of CPU time to frame and decode traps, so
// libFuzzer saves it as a finding. This build carries AddressSanitizer and coverage counters,
// which cost about eight times (732 bytes of 504 messages: 131 µs optimized, 1,031 µs here), so
// the budget here is `instrumentationFactor` times that. Measured twice before it traps (the first
// run of a process pays for lazy initialization), in this thread's CPU time, not the wall
// clock: a loaded machine must not make findings.
import Glibc
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: start, count: count))
    let allowed = UInt64(max(1, (count + 1023) / 1024)) * 1_000_000 * instrumentationFactor
    var elapsed: UInt64 = 0
    for _ in 0..<2 {
        let began = threadCPUNanoseconds()
        FuzzTargets.varlink(input)
        elapsed = threadCPUNanoseconds() - began
        if elapsed <= allowed { return 0 }
    }
    fatalError("varlink: \(count) bytes took \(elapsed / 1000) µs twice, over \(instrumentationFactor) ms per KiB instrumented")
}

/// What the sanitizer and coverage instrumentation multiply the cost by, with a margin.
private let instrumentationFactor: UInt64 = 10

private func threadCPUNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
