// libFuzzer entry point (make fuzz): a netlink receive buffer as raw bytes.
import ReachabilityLinuxFuzz

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    NetlinkFuzzTarget.decode(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}
