import FoundationEssentials
import ReachabilityCore

/// The answer of a method handler (`Check`, `Probe`): reply parameters or a varlink error.
public enum VarlinkMethodResult: Sendable {
    /// The reply's parameters object, already encoded as JSON.
    case parameters(Data)
    case error(VarlinkError)

    /// A reply `{key: value}`, e.g. `.reply("probe", probe)` for `Probe`.
    public static func reply<T: Encodable>(_ key: String, _ value: T) throws -> VarlinkMethodResult {
        .parameters(try VarlinkCodec.encodeParameters(key: key, value: value))
    }
}
