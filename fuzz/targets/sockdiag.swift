// libFuzzer entry point (make fuzz): a sock_diag dump reply (SOCK_DIAG_BY_FAMILY messages).
import ReachabilityCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTargets.sockDiag(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
