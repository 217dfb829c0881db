// COpenSSLInit: makes the process's first OpenSSL call, before main and before any test runs, so that OpenSSL
// never registers its atexit cleanup (OPENSSL_INIT_NO_ATEXIT; only the first OPENSSL_init_crypto call decides).
//
// Why: at exit() the cleanup frees OpenSSL's global state and deletes its thread-local keys while other threads
// (Swift's cooperative pool, which runs TLS, JWT signing and the mock) are still alive. A thread still inside
// OpenSSL then runs on freed state, and a thread that ends after the cleanup never runs OpenSSL's thread-stop
// handler, so its error queue and random generators are lost: LeakSanitizer reports them (scripts/test.sh's
// AddressSanitizer step). Without the cleanup, a thread's state is freed when the thread ends and everything
// else stays reachable until the kernel reclaims the process. See docs/ARCHITECTURE.md, "OpenSSL's initialisation".
#include <openssl/crypto.h>

__attribute__((constructor)) static void apns_openssl_init_without_atexit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
