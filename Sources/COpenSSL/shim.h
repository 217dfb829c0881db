// COpenSSL: the OpenSSL 3.0 headers apns-bulk uses, plus static inline wrappers for the
// function-like macros Swift cannot import. Each wrapper is prefixed `apns_` and says why it exists.
#ifndef APNS_BULK_COPENSSL_SHIM_H
#define APNS_BULK_COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h> // OSSL_PROVIDER_load: the legacy provider opens old (RC2-40) PKCS#12 files
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline int apns_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

// SSL_set_tlsext_host_name (SNI) is a macro over SSL_ctrl.
static inline int apns_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

// SSL_CTX_set_mode is a macro over SSL_CTX_ctrl.
static inline long apns_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

// SSL_CTX_set1_groups_list is a macro over SSL_CTX_ctrl.
static inline int apns_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}

// SSL_CTX_set_session_cache_mode is a macro over SSL_CTX_ctrl.
static inline long apns_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

// BN_num_bytes is a macro over BN_num_bits.
static inline int apns_BN_num_bytes(const BIGNUM *bn) {
    return BN_num_bytes(bn);
}

// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long apns_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// OPENSSL_free is a macro that adds file and line to CRYPTO_free.
static inline void apns_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

// The typed STACK_OF(X509) accessors are macros in OpenSSL 3.0.
static inline int apns_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

static inline X509 *apns_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

static inline void apns_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

// SSL_CTX_add_extra_chain_cert is a macro over SSL_CTX_ctrl; it takes ownership of the certificate.
static inline long apns_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add_extra_chain_cert(ctx, cert);
}

// XN_FLAG_RFC2253 is a compound macro Swift does not import; without ESC_MSB so UTF-8 names print as UTF-8.
static inline unsigned long apns_XN_FLAG_RFC2253_UTF8(void) {
    return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB;
}

// --- APNSTransport (TLS connections) ---

// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl (tests pin servers to TLS 1.2).
static inline int apns_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

// SSL_CTX_set_read_ahead is a macro over SSL_CTX_ctrl (read whole records per read(2), not header then body).
static inline void apns_SSL_CTX_set_read_ahead(SSL_CTX *ctx, int yes) {
    SSL_CTX_set_read_ahead(ctx, yes);
}

// The SSL_OP_* options are 64-bit shift macros (SSL_OP_BIT) Swift does not import.
static inline uint64_t apns_SSL_OP_NO_RENEGOTIATION(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

static inline uint64_t apns_SSL_OP_NO_COMPRESSION(void) {
    return SSL_OP_NO_COMPRESSION;
}

// sk_X509_new_null and sk_X509_push are typed STACK_OF macros.
static inline STACK_OF(X509) *apns_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

static inline int apns_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) {
    return sk_X509_push(stack, cert);
}

#endif
