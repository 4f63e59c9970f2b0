// libFuzzer entry point (make fuzz): a captive-portal API answer (JSON bytes).
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.captivePortalAPI(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
