#!/usr/bin/env bash
# Benchmarks of ISSUE-12, printed as figures (never asserted in unit tests): the program is the Python package
# scripts/benchkit (standard library only; options, processes and pinning, statistics, the report table, one module
# a row). `scripts/bench.sh --help` lists its rows, options and environment variables (ROUNDS ROWS RECORDS ...
# STEP_TIMEOUT, APNS_BULK_BIN, APNS_BULK_STATIC_BIN). Its unit tests, a step of scripts/test.sh:
#   python3 -m unittest discover -s scripts/benchkit/tests -t scripts
#
# Usage: scripts/bench.sh [--quick] [--rounds N] [--rows 1,2,...] [--records N] [--validate-records N]
#                         [--rss-small N] [--rss-large N] [--dup-small N] [--dup-large N] [--starts N]
#                         [--instr-records N] [--rtt-records N] [--rtts "20 50 100"] [records] [large records]
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
command -v python3 >/dev/null || {
    echo "bench: installing python3" >&2
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends python3 >&2
}
export PYTHONPATH="$scripts${PYTHONPATH:+:$PYTHONPATH}"
export BENCH_CALLER_PATH="$PATH"   # the tools are looked up on this PATH, whatever an interpreter shim sets
exec python3 -m benchkit "$@"
