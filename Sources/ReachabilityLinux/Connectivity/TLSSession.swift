import COpenSSL
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// A TLS client session (OpenSSL) over a connected, non-blocking socket that the caller owns
/// and polls. The server's certificate is verified against the system's store (and the
/// certificates of `CAFile=`), and its name against the host the URL names (`SSL_set1_host`, or
/// the IP address for an address literal); TLS 1.2 at least. Each call says what the socket must
/// become before it is called again (`wantRead`, `wantWrite`).
final class TLSSession {
    /// What one step of the session came to.
    enum Step {
        /// The handshake finished, or that many bytes were written or read.
        case done(Int)
        case wantRead
        case wantWrite
        /// The peer closed the connection (with or without close_notify).
        case closed
    }

    /// Kept alive while the session is: `SSL_new` shares its context.
    private let context: TLSContext
    private let ssl: OpaquePointer
    private let host: String

    /// `SSL_new` on `fd` for `host`, from `context` (the checker's shared one, or one made for
    /// this session alone).
    init(fd: Int32, host: String, context: TLSContext) throws(ProbeFailure) {
        self.host = host
        self.context = context
        guard let ssl = SSL_new(context.context) else { throw Self.failure("SSL_new") }
        self.ssl = ssl
        let isLiteral = SocketAddress(ip: host, port: 0) != nil
        var configured = SSL_set_fd(ssl, fd) == 1
        if isLiteral {
            configured = configured && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
        } else {
            configured = configured && SSL_set1_host(ssl, host) == 1 && reachd_ssl_set_sni(ssl, host) == 1
        }
        guard configured else {
            let failure = Self.failure("setting up TLS for \(host)")
            SSL_free(ssl)
            throw failure
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// `SSL_connect`: the handshake, the certificate checked.
    func handshake() throws(ProbeFailure) -> Step {
        ERR_clear_error()
        let rc = SSL_connect(ssl)
        if rc == 1 { return .done(0) }
        return try step(rc, doing: "TLS handshake with \(host)")
    }

    /// `SSL_write` of `bytes` (some of them).
    func write(_ bytes: UnsafeRawBufferPointer) throws(ProbeFailure) -> Step {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .done(0) }
        ERR_clear_error()
        let rc = SSL_write(ssl, base, Int32(clamping: bytes.count))
        if rc > 0 { return .done(Int(rc)) }
        return try step(rc, doing: "sending to \(host) over TLS")
    }

    /// `SSL_read` into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ProbeFailure) -> Step {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .done(0) }
        ERR_clear_error()
        let rc = SSL_read(ssl, base, Int32(clamping: buffer.count))
        if rc > 0 { return .done(Int(rc)) }
        return try step(rc, doing: "reading from \(host) over TLS")
    }

    /// `SSL_get_error` on a call that returned `rc`.
    private func step(_ rc: Int32, doing what: String) throws(ProbeFailure) -> Step {
        let savedErrno = errno
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            if ERR_peek_error() == 0 && (savedErrno == 0 || rc == 0) { return .closed }
            if savedErrno == ECONNRESET { throw ProbeFailure(.reset, "\(what): \(Errno(rawValue: savedErrno).text)") }
            throw ProbeFailure(.tls, "\(what): \(Self.errorQueueText() ?? Errno(rawValue: savedErrno).text)")
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != Int(X509_V_OK) {
                let reason = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
                throw ProbeFailure(.tls, "\(what): certificate verify failed: \(reason)")
            }
            throw ProbeFailure(.tls, "\(what): \(Self.errorQueueText() ?? "TLS error")")
        }
    }

    /// The oldest error on OpenSSL's queue as text (`ERR_error_string_n`), the queue emptied.
    private static func errorQueueText() -> String? {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func failure(_ what: String) -> ProbeFailure {
        ProbeFailure(.tls, "\(what): \(errorQueueText() ?? "TLS error")")
    }
}
