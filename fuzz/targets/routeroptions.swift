// libFuzzer entry point (make fuzz): router advertisement options (ND option bytes).
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.routerOptions(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
