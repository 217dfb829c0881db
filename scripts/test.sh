#!/usr/bin/env bash
# The whole test suite: installs missing system packages, builds, runs every test (unit, integration against the
# built-in mock over TLS on 127.0.0.1, end-to-end on the built executable), then curl and h2load against the mock,
# then every test again under AddressSanitizer (with LeakSanitizer) and ThreadSanitizer, then each parser's
# libFuzzer target for a short time. Prints one timing line per step; exits non-zero when any step fails.
# Arguments go to every `swift test` (e.g. --filter Suite).
set -euo pipefail
cd "$(dirname "$0")/.."

# Runs one step, then prints how long it took; a failing step ends the script with its status.
step() {
    local name=$1 start=$SECONDS
    shift
    echo "test.sh: $name ..." >&2
    "$@"
    echo "test.sh: $name: $((SECONDS - start)) s" >&2
}

# SwiftPM and the compiler leave TemporaryDirectory.* folders in $TMPDIR: they (and the tests) get a private one,
# removed at the end, so a test run leaves nothing in /tmp.
test_tmp="$(mktemp -d "${TMPDIR:-/tmp}/apns-bulk-test.XXXXXX")"
trap 'status=$?; rm -rf "$test_tmp"; [ "$status" -eq 0 ] || echo "test.sh: FAILED (exit $status) after $SECONDS s" >&2' EXIT
export TMPDIR="$test_tmp"

# Installs Debian packages: straight from the package lists on hand, else after `apt-get update`. Prints nothing
# on success; the status says whether every package was installed.
apt_install() {
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2 ||
        { DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq &&
          DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2; }
}

# The report's browser test renders HTML in headless chromium and reads the screenshot with python3: installed
# here when missing (chromium is large, so install-deps.sh leaves it out); without it that one test is skipped.
install_browser() {
    local browser=()
    command -v chromium >/dev/null || browser+=(chromium)
    command -v python3 >/dev/null || browser+=(python3)
    [ ${#browser[@]} -gt 0 ] || return 0
    echo "test: installing ${browser[*]} for the report's browser test" >&2
    apt_install "${browser[@]}" ||
        echo "test: could not install ${browser[*]}: the report's browser test will be skipped" >&2
}

# apt_install with a policy-rc.d (when there is none) that keeps the packages' services from starting.
apt_install_not_started() {
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    local policy=/usr/sbin/policy-rc.d made_policy=
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 0755 "$policy" && made_policy=1
    fi
    apt_install "$@" ||
        { echo "test: could not install $*" >&2; [ -z "$made_policy" ] || $sudo rm -f "$policy"; return 1; }
    [ -z "$made_policy" ] || $sudo rm -f "$policy"
}

# promtool (Debian's prometheus) and prometheus-node-exporter read the --metrics files in the metrics tests, as the
# tools users keep beside apns-bulk. Their packages would start the services on install: a policy-rc.d that says
# no keeps them stopped (the tests start node_exporter themselves, on 127.0.0.1).
install_metrics_tools() {
    local need=()
    [ -x /usr/bin/promtool ] || need+=(prometheus)
    [ -x /usr/bin/prometheus-node-exporter ] || need+=(prometheus-node-exporter)
    [ -x /usr/bin/prometheus-pushgateway ] || need+=(prometheus-pushgateway)
    [ ${#need[@]} -gt 0 ] || return 0
    echo "test: installing ${need[*]} for the metrics tests" >&2
    # The policy-rc.d keeps the packages' services stopped; the tests start their own node_exporter and gateway on
    # ephemeral ports and stop them by pid. Nothing here stops a process by name: on a user's machine that would
    # end their own node_exporter.
    apt_install_not_started "${need[@]}"
}

# The token clean-up tests run samples/cron/'s SQL against a real PostgreSQL server (started by the test as the
# postgres user on a private socket) and SQLite: Debian's postgresql and sqlite3 are installed here when missing,
# with a policy-rc.d that keeps the package from starting its own cluster.
install_database_tools() {
    local need=()
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
    command -v sqlite3 >/dev/null || need+=(sqlite3)
    [ ${#need[@]} -gt 0 ] || return 0
    echo "test: installing ${need[*]} for the token clean-up tests" >&2
    apt_install_not_started "${need[@]}"
}

# The completion tests drive each shell's completion of the generated scripts (bash's completion function, also as
# bash-completion loads it; zsh on a pseudo-terminal; fish's complete -C), and the terminal tests read send's live
# display off a tmux screen: bash-completion, zsh, fish and tmux are installed here when missing; without one, its
# tests are skipped.
install_shells() {
    local need=()
    [ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)
    command -v zsh >/dev/null || need+=(zsh)
    command -v fish >/dev/null || need+=(fish)
    command -v tmux >/dev/null || need+=(tmux)
    [ ${#need[@]} -gt 0 ] || return 0
    echo "test: installing ${need[*]} for the completion and terminal tests" >&2
    apt_install "${need[@]}" || echo "test: could not install ${need[*]}: their tests will be skipped" >&2
}

# The many-address tests make network namespaces (unshare, nsenter: util-linux) and route a black hole into their
# loopback with ip: iproute2 is installed here when missing.
install_namespace_tools() {
    command -v ip >/dev/null && return 0
    echo "test: installing iproute2 for the many-address tests" >&2
    apt_install iproute2
}

# End-to-end suites whose work is the tools beside apns-bulk (shells, tmux, chromium, promtool and node_exporter,
# the documented examples run as a user copies them,
# PostgreSQL, the scheduler samples' scripts) or the command line alone (validate): they run in the plain pass, and
# their code paths' unit tests run under the sanitizers, which would only make those tools slow.
sanitizer_skip='EndToEndTests\.(DocumentedExamplesEndToEndTests|CompletionEndToEndTests|TerminalEndToEndTests|ReportEndToEndTests|MetricsEndToEndTests|TokenCleanupEndToEndTests|PruneSourcesEndToEndTests|SchedulerSamplesEndToEndTests|ValidateEndToEndTests)/'

# Builds in its own scratch path with `--sanitize=$1` and runs every test there but $sanitizer_skip, end-to-end
# tests included: they run that build's executable, so a leak or race in `apns-bulk` itself fails them too, and
# wait 5 times longer for it (APNS_BULK_TEST_TIME_SCALE). The tests are Swift Testing only (--disable-xctest skips the empty XCTest
# pass, whose runner leaks). Leaks inside Foundation itself are suppressed by name in Tests/Sanitizers/lsan.supp;
# nothing of ours is. Tests/Sanitizers/tsan.supp names the one lock ThreadSanitizer cannot see (Synchronization's
# Mutex on Linux, a futex), never a race in our data.
sanitized_tests() {
    local sanitizer=$1 scratch=$2
    shift 2
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    APNS_BULK_BIN="$PWD/$scratch/debug/apns-bulk" APNS_BULK_TEST_TIME_SCALE=5 APNS_BULK_SANITIZER="$sanitizer" \
        LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp" \
        TSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/tsan.supp" \
        swift test --skip-build --disable-xctest --sanitize="$sanitizer" --scratch-path "$scratch" \
        --skip "$sanitizer_skip" "$@"
}

step "install dependencies" bash scripts/install-deps.sh
step "install the browser" install_browser
step "install promtool, node_exporter and the Pushgateway" install_metrics_tools
step "install bash-completion, zsh, fish and tmux" install_shells
step "install postgresql and sqlite3" install_database_tools
step "install iproute2" install_namespace_tools
step "formatted as .swift-format says (swift format lint --strict)" \
    swift format lint --strict --recursive --parallel Sources Tests Package.swift samples/library
step "a /// line on every public declaration" python3 scripts/check-public-docs.py
# scripts/bench.sh is the package scripts/benchkit: its unit tests (options, statistics, the table; no benchmark run).
step "bench program (scripts/benchkit's unit tests)" python3 -m unittest discover -s scripts/benchkit/tests -t scripts
step "build" swift build --build-tests
step "unsafe code only in scripts/unsafe-allowed.txt's files (and the check caught on probes)" bash scripts/check-unsafe.sh --self-test
export APNS_BULK_BIN="$PWD/.build/debug/apns-bulk"
step "tests" swift test --skip-build "$@"
# Independent HTTP/2 clients (curl, h2load) against the mock.
step "interop" bash scripts/interop.sh
# A separate package depending on apns-bulk by version (README "Use it as a library").
step "the library as a versioned dependency" bash scripts/library-test.sh
# Every mock fault at once, kill -9 and --resume rounds, audited against the mock's log of accepted notifications.
step "soak" bash scripts/soak.sh 3000 2
# The same at a 50 ms round-trip time (the project's rtt-relay between them): the pool widens over more connections.
step "soak at RTT 50 ms" env SOAK_RTT=50 SOAK_SEED=2 bash scripts/soak.sh 3000 2
step "tests under AddressSanitizer" sanitized_tests address .build-asan "$@"
step "tests under ThreadSanitizer" sanitized_tests thread .build-tsan "$@"
# Every parser's libFuzzer target, from its seed corpus, for FUZZ_SECONDS each (default 20).
step "fuzz" bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
echo "test.sh: all steps passed in $SECONDS s" >&2
