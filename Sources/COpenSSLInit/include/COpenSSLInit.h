// COpenSSLInit has no API: linking it in runs its load-time constructor (openssl_init.c), which initialises
// OpenSSL without its atexit cleanup. APNSCrypto depends on it, so every program that uses OpenSSL through
// apns-bulk's targets (the tool, the tests, the fuzz targets) gets it.
#ifndef APNS_BULK_COPENSSLINIT_H
#define APNS_BULK_COPENSSLINIT_H
#endif
