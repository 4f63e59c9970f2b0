#ifndef REACHD_COPENSSL_SHIM_H
#define REACHD_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* OpenSSL's macros over SSL_ctrl / SSL_CTX_ctrl, which Swift cannot import. */
static inline long reachd_ssl_set_sni(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long reachd_ssl_ctx_min_tls12(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
static inline uint64_t reachd_ssl_ctx_ignore_unexpected_eof(SSL_CTX *ctx) {
    return SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
}

#endif
