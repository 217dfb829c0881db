// CLinux: the Linux event-loop headers Swift's Glibc module does not include. Plain functions and enums: no
// wrappers. Used by APNSTransport's EventLoop, and by the CLI for glibc's allocator settings (malloc.h).
#ifndef APNS_BULK_CLINUX_SHIM_H
#define APNS_BULK_CLINUX_SHIM_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <malloc.h>
#else
#error "apns-bulk builds on Linux only: its event loop is epoll and eventfd (Package.swift)"
#endif

#endif
