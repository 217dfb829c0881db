#!/usr/bin/env bash
# The whole test suite: installs missing system packages, builds, runs every test (unit, integration against the
# built-in mock over TLS on 127.0.0.1, end-to-end on the built executable), then curl and h2load against the mock.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# The report's browser test renders HTML in headless chromium and reads the screenshot with python3: installed
# here when missing (chromium is large, so install-deps.sh leaves it out); without it that one test is skipped.
browser=()
command -v chromium >/dev/null || browser+=(chromium)
command -v python3 >/dev/null || browser+=(python3)
if [ ${#browser[@]} -gt 0 ]; then
    echo "test: installing ${browser[*]} for the report's browser test" >&2
    SUDO=$([ "$(id -u)" -ne 0 ] && echo sudo || true)
    { DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${browser[@]}" >&2; } ||
        echo "test: could not install ${browser[*]}: the report's browser test will be skipped" >&2
fi
# SwiftPM and the compiler leave TemporaryDirectory.* folders in $TMPDIR: they (and the tests) get a private one,
# removed at the end, so a test run leaves nothing in /tmp.
test_tmp="$(mktemp -d "${TMPDIR:-/tmp}/apns-bulk-test.XXXXXX")"
trap 'rm -rf "$test_tmp"' EXIT
export TMPDIR="$test_tmp"
swift build --build-tests
export APNS_BULK_BIN="$PWD/.build/debug/apns-bulk"
swift test --skip-build "$@"
# Independent HTTP/2 clients (curl, h2load) against the mock.
bash scripts/interop.sh
bash scripts/soak.sh 3000 2  # every mock fault at once, kill -9 and --resume rounds, audited against the mock's log
