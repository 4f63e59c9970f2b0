import COpenSSL
import ReachabilityCore

/// An OpenSSL client context (`SSL_CTX`): TLS 1.2 at least, peer verification on, the system's
/// CA store and the certificates of `CAFile=`. Loading the store costs some 18 ms of CPU, so the
/// connectivity checker builds one per configuration and every check's `TLSSession` shares it
/// (OpenSSL allows `SSL_new` on one context from several threads); a reload builds a new one.
public final class TLSContext: @unchecked Sendable {
    /// The context; freed when the last session made from it is gone (`SSL_new` takes a reference).
    let context: OpaquePointer
    /// The `CAFile=` it trusts besides the system's store.
    public let caFile: String?

    /// Builds the context; fails when OpenSSL cannot make one or `caFile` cannot be read.
    public init(caFile: String?) throws(ProbeFailure) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSSession.failure("SSL_CTX_new") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        _ = reachd_ssl_ctx_min_tls12(context)
        // A server that closes without close_notify ends its answer: HTTP/1.1 with
        // `Connection: close` says where the body ends on its own.
        _ = reachd_ssl_ctx_ignore_unexpected_eof(context)
        _ = SSL_CTX_set_default_verify_paths(context)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                let failure = TLSSession.failure("CAFile=\(caFile)")
                SSL_CTX_free(context)
                throw failure
            }
        }
        self.context = context
        self.caFile = caFile
    }

    deinit {
        SSL_CTX_free(context)
    }
}
