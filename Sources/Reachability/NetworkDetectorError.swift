/// Why a `NetworkDetector` check did not find the internet (or the app's backend) answering.
public enum NetworkDetectorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No reachd answers; the library cannot run the connectivity check in-process.
    case daemonNotRunning(socketPath: String)
    /// The connectivity check is disabled (reachd's `[Connectivity] Enabled=no`, or
    /// `inProcessServices.connectivity.enabled == false` without a daemon).
    case probeDisabled
    /// The machine has no usable path (no HTTP request was made).
    case notReachable
    /// An HTTP answer that is not the expected one: a captive portal (where it redirected to).
    case captivePortal(portalURL: String?)
    /// The check failed: timeout, refused, DNS failure (the probe's error text).
    case probeFailed(String)
    /// Talking to reachd failed (the client error's text).
    case daemon(String)
    /// `check(url:)`: the server answered with a status outside the accepted range.
    case httpStatus(Int)
    /// `check(url:)`: no answer within the timeout (seconds).
    case timedOut(seconds: Double)
    /// `check(url:)`: no HTTP answer (connection refused, host not found, TLS failure, …).
    case requestFailed(String)
    /// `check(url:)`: not an http or https URL.
    case invalidURL(String)

    /// The HTTP status this error carries (the iOS NetworkDetector's publisher fails with it): the status of
    /// `httpStatus`, 0 for every error without an HTTP answer behind it.
    public var statusCode: Int {
        switch self {
        case .httpStatus(let code): return code
        case .daemonNotRunning, .probeDisabled, .notReachable, .captivePortal, .probeFailed, .daemon,
             .timedOut, .requestFailed, .invalidURL:
            return 0
        }
    }

    public var description: String {
        switch self {
        case .daemonNotRunning(let path): return "reachd is not running (no socket at \(path))"
        case .probeDisabled: return "the connectivity check is disabled"
        case .notReachable: return "the network is not reachable"
        case .captivePortal(let url): return "captive portal" + (url.map { " at \($0)" } ?? "")
        case .probeFailed(let reason): return "connectivity check failed: \(reason)"
        case .daemon(let reason): return "reachd: \(reason)"
        case .httpStatus(let code): return "the server answered HTTP \(code)"
        case .timedOut(let seconds): return "no answer within \(seconds.formatted()) s"
        case .requestFailed(let reason): return "request failed: \(reason)"
        case .invalidURL(let url): return "\(url) is not an http or https URL"
        }
    }
}

private extension Double {
    /// `10` rather than `10.0`; `0.5` as is.
    func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
