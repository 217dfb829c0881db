// CNghttp2: the nghttp2 1.52 header apns-bulk uses. nghttp2's API is plain functions and enums,
// so no macro wrappers are needed; this file exists so the system-library target has one entry point.
#ifndef APNS_BULK_CNGHTTP2_SHIM_H
#define APNS_BULK_CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>

#endif
