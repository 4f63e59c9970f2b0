// libFuzzer entry point (make fuzz): an nl80211 reply (station and interface records).
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.nl80211(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
