#!/usr/bin/env bash
# Builds the release binary with the Swift runtime linked in (the same build the Containerfile makes) and proves it
# needs no Swift toolchain to run:
#   1. `ldd` lists no libswift* and the binary's RUNPATH names no toolchain directory;
#   2. a copy of it, in a temporary directory, runs `--version` and `validate` on the samples under `env -i`
#      (PATH=/usr/bin:/bin, no LD_LIBRARY_PATH), so neither the toolchain's binaries nor its libraries are reachable.
# Usage: scripts/static-build.sh [--skip-build]    (the binary is left in .build-static/release/apns-bulk)
# Slow: a full release build, several minutes on 2 cores. Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_build=false
for arg in "$@"; do
    case "$arg" in
        --skip-build) skip_build=true ;;
        -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
        *) echo "static-build: unknown argument $arg" >&2; exit 64 ;;
    esac
done

bash scripts/install-deps.sh
command -v ldd >/dev/null || { echo "static-build: ldd is missing (Debian package libc-bin)" >&2; exit 1; }
command -v readelf >/dev/null || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils >&2
}

build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
if [ "$skip_build" = false ]; then
    "${build[@]}"
fi
bin="$("${build[@]}" --show-bin-path)/apns-bulk"
[ -x "$bin" ] || { echo "static-build: $bin was not built" >&2; exit 1; }

fail() { echo "static-build: FAIL: $*" >&2; exit 1; }

echo "== ldd $bin"
ldd "$bin"
if ldd "$bin" | grep -qi 'libswift\|libFoundation\|libdispatch\|libBlocksRuntime'; then
    fail "the binary links a Swift runtime library dynamically"
fi
runpath="$(readelf -d "$bin" | grep -E 'RUNPATH|RPATH' || true)"
echo "== RUNPATH: ${runpath:-none}"
swift_root="$(dirname "$(dirname "$(command -v swift)")")"
if [ -n "$runpath" ] && printf '%s' "$runpath" | grep -q "$swift_root"; then
    fail "the binary's RUNPATH names the toolchain ($swift_root)"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/apns-bulk-static.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/apns-bulk"
cp samples/campaign.ndjson samples/campaign.csv samples/template.json "$work/"
clean_env=(env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8)

echo "== env -i PATH=/usr/bin:/bin apns-bulk --version"
version="$(cd "$work" && "${clean_env[@]}" ./apns-bulk --version)" || fail "--version did not run"
echo "$version"
[ -n "$version" ] || fail "--version printed nothing"

echo "== env -i ... apns-bulk validate campaign.ndjson (expect exit 2: the sample has invalid records)"
status=0
(cd "$work" && "${clean_env[@]}" ./apns-bulk validate campaign.ndjson --topic com.example.app >validate.out) || status=$?
cat "$work/validate.out"
[ "$status" -eq 2 ] || fail "validate campaign.ndjson exited $status, expected 2"
grep -q 'TokenOddLength' "$work/validate.out" || fail "validate did not report the sample's invalid records"

echo "== env -i ... apns-bulk validate campaign.csv --template template.json (expect exit 2: three invalid rows)"
status=0
(cd "$work" && "${clean_env[@]}" ./apns-bulk validate campaign.csv --template template.json \
    --topic com.example.app >validate-csv.out) || status=$?
cat "$work/validate-csv.out"
[ "$status" -eq 2 ] || fail "validate campaign.csv exited $status, expected 2"
grep -q 'CsvColumnCount' "$work/validate-csv.out" || fail "validate did not read the CSV sample with its template"

size="$(du -h "$bin" | cut -f1)"
echo "static-build: OK: $bin ($size) needs no Swift runtime"
