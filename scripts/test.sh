#!/usr/bin/env bash
# The whole test suite: installs missing system packages, builds, runs every test (unit, integration against the
# built-in mock over TLS on 127.0.0.1, end-to-end on the built executable), then curl and h2load against the mock.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build --build-tests
export APNS_BULK_BIN="$PWD/.build/debug/apns-bulk"
swift test --skip-build "$@"
# Independent HTTP/2 clients (curl, h2load) against the mock.
bash scripts/interop.sh
bash scripts/soak.sh 3000 2  # every mock fault at once, kill -9 and --resume rounds, audited against the mock's log
