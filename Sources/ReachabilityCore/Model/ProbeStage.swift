/// The step of a connectivity check that failed (varlink `ConnectivityProbe.failedStage`): a resolver that
/// does not answer is told apart from an internet that does not.
public enum ProbeStage: String, Codable, Sendable, CaseIterable {
    /// The system's resolver gave no address for the check's host (no answer, SERVFAIL, NXDOMAIN).
    case resolve
    /// No connection: refused, no route, or no answer to the SYN.
    case connect
    /// The TLS handshake or the certificate failed.
    case tls
    /// Connected, but no complete HTTP answer came back.
    case request
}
