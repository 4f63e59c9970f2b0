import FoundationEssentials
import ReachabilityCore

/// The answer of a method handler (`Check`, `Probe`): reply parameters or a varlink error.
public enum VarlinkMethodResult: Sendable {
    /// The reply's parameters object, already encoded as JSON.
    case parameters(Data)
    case error(VarlinkError)

    /// A reply `{key: value}`, e.g. `.reply("probe", probe)` for `Probe`. A value that cannot be
    /// encoded (JSONEncoder refuses NaN and infinities) is answered `InternalError`: the caller
    /// learns the call failed, the connection stays usable.
    public static func reply<T: Encodable>(_ key: String, _ value: T) -> VarlinkMethodResult {
        do {
            return .parameters(try VarlinkCodec.encodeParameters(key: key, value: value))
        } catch {
            return .error(.internalError)
        }
    }
}
