// libFuzzer entry point (make fuzz): varlink input as raw bytes.
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.varlink(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
