#!/usr/bin/env bash
# Installs the system packages apns-bulk needs to build and test, when they are missing (Debian 12; run as root).
#   libnghttp2-dev  HTTP/2 (nghttp2 1.52)      libssl-dev  TLS and ES256 (OpenSSL 3.0)
#   pkg-config      lets SwiftPM find both     openssl     the CLI, used by tests to cross-check signatures and pins
#   nghttp2-client  h2load, for interop tests and benchmarks
#   curl            curl --http2, for interop tests against the mock
#   time            /usr/bin/time -v, for peak-memory figures in scripts/bench.sh
set -euo pipefail

need=()
pkg-config --exists libnghttp2 2>/dev/null || need+=(libnghttp2-dev)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v openssl >/dev/null || need+=(openssl)
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v curl >/dev/null || need+=(curl)
[ -x /usr/bin/time ] || need+=(time)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi

echo "install-deps: installing ${need[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
