// libFuzzer entry point (make fuzz): modemmanager input as raw bytes.
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.modemManager(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
