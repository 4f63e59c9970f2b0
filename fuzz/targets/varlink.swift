// libFuzzer entry point (make fuzz): varlink input as raw bytes.
// Fuzzed for time as well as for crashes: an input that takes more than a millisecond per KiB
// (and at least one millisecond) to frame and decode traps, so libFuzzer saves it as a finding.
import Glibc
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: start, count: count))
    let began = monotonicNanoseconds()
    FuzzTargets.varlink(input)
    let elapsed = monotonicNanoseconds() - began
    let allowed = UInt64(max(1, (count + 1023) / 1024)) * 1_000_000
    if elapsed > allowed {
        fatalError("varlink: \(count) bytes took \(elapsed / 1000) µs, more than 1 ms per KiB")
    }
    return 0
}

private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
