#!/usr/bin/env bash
# The versioned-dependency test (README "Use it as a library"): a separate package (samples/library) depends on
# apns-bulk BY VERSION, as another project would: a copy of this checkout's files committed and tagged 1.0.0 in a
# git repository of its own, named by a file:// URL. SwiftPM refuses unsafe build flags in such a dependency, so the
# build fails if any library target carries one. The program (the README's code, compared here byte for byte) then
# sends one notification and the sample campaign to the mock, and the mock's log of accepted notifications is
# checked against what it printed and wrote. Every process it starts it stops by pid; the folder is removed.
#
# Usage: scripts/library-test.sh   (APNS_BULK_BIN=path: the apns-bulk whose mock it runs; default .build/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${APNS_BULK_BIN:-$ROOT/.build/debug/apns-bulk}
[ -x "$BIN" ] || { echo "library-test: no apns-bulk at $BIN (build first, or set APNS_BULK_BIN)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/apns-bulk-library.XXXXXX")
MOCK=
cleanup() {
    [ -z "$MOCK" ] || { kill -INT "$MOCK" 2>/dev/null || true; wait "$MOCK" 2>/dev/null || true; }
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "library-test: FAIL: $*" >&2; exit 1; }

# 1. The README's code is the sample's code.
python3 - "$ROOT/README.md" "$ROOT/samples/library/Sources/SendFromSwift/main.swift" <<'PY' || fail "README's library code differs from samples/library/Sources/SendFromSwift/main.swift"
import sys
readme, main = open(sys.argv[1]).read(), open(sys.argv[2]).read()
section = readme.split("## Use it as a library", 1)[1].split("\n## ", 1)[0]
blocks = [b.split("\n", 1)[1] for b in section.split("```swift")[1:]]
blocks = [b.split("```", 1)[0] for b in blocks]
sys.exit(0 if main in blocks else 1)
PY

# 2. A tagged copy of this checkout (tracked and new files as they are now, nothing ignored).
mkdir -p "$WORK/apns-bulk"
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' path; do
    [ -e "$path" ] || continue  # deleted in the work tree
    mkdir -p "$WORK/apns-bulk/$(dirname "$path")"
    cp -p "$path" "$WORK/apns-bulk/$path"
done
git -C "$WORK/apns-bulk" init -q
git -C "$WORK/apns-bulk" add -A
git -C "$WORK/apns-bulk" -c user.name=library-test -c user.email=library-test@localhost commit -qm snapshot
git -C "$WORK/apns-bulk" tag 1.0.0

# 3. The separate package, its URL pointing at the copy; built as a user would build it.
mkdir -p "$WORK/app"
cp -R samples/library/. "$WORK/app/"
sed -i "s|https://example.com/your-copy-of/apns-bulk.git|file://$WORK/apns-bulk|" "$WORK/app/Package.swift"
grep -q "file://$WORK/apns-bulk" "$WORK/app/Package.swift" || fail "samples/library/Package.swift names no dependency URL to replace"
echo "library-test: building samples/library against apns-bulk 1.0.0 (a versioned dependency)" >&2
(cd "$WORK/app" && swift build --product SendFromSwift > "$WORK/build.log" 2>&1) || { tail -30 "$WORK/build.log" >&2; fail "the separate package does not build"; }
grep -q "Computing version for .*apns-bulk\|apns-bulk.*1\.0\.0\|Fetching .*apns-bulk" "$WORK/build.log" "$WORK/app/Package.resolved" 2>/dev/null \
    || fail "the build did not resolve apns-bulk by version"
grep -q '"version" : "1.0.0"' "$WORK/app/Package.resolved" || fail "Package.resolved does not pin apns-bulk at 1.0.0"

# 4. The mock, then the program.
RUN="$WORK/run"
mkdir -p "$RUN"
cp samples/keys/AuthKey_TEST123456.p8 samples/campaign.ndjson "$RUN/"
"$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/mock.port" --write-ca "$WORK/mock-ca.pem" \
    --key-id TEST123456 --team-id TEAMID1234 --public-key samples/keys/AuthKey_TEST123456.pub.pem \
    --topic com.example.app --log-accepted "$WORK/accepted.ndjson" 2> "$WORK/mock.log" &
MOCK=$!
for _ in $(seq 1 100); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
[ -s "$WORK/mock.port" ] || { cat "$WORK/mock.log" >&2; fail "the mock did not start"; }
status=0
(cd "$RUN" && APNS_ENDPOINT="https://127.0.0.1:$(cat "$WORK/mock.port")" APNS_CA_FILE="$WORK/mock-ca.pem" \
    timeout 120 "$WORK/app/.build/debug/SendFromSwift" > "$WORK/out.txt" 2>&1) || status=$?
kill -INT "$MOCK"; wait "$MOCK" 2>/dev/null || true; MOCK=
cat "$WORK/out.txt" >&2
[ "$status" -eq 0 ] || fail "SendFromSwift exited $status"

# 5. What the program said, against what the mock accepted and the result file holds.
grep -q "^one notification: APNs answered 200$" "$WORK/out.txt" || fail "the one notification was not answered 200"
records=$(grep -c . samples/campaign.ndjson)
[ "$(grep -c . "$RUN/results.ndjson")" -eq "$records" ] || fail "results.ndjson does not hold one line per record ($records)"
delivered=$(grep -c '"outcome":"delivered"' "$RUN/results.ndjson" || true)
[ "$delivered" -gt 0 ] || fail "the campaign delivered nothing"
accepted=$(grep -c . "$WORK/accepted.ndjson" || true)
[ "$accepted" -eq $((delivered + 1)) ] || fail "the mock accepted $accepted notifications, expected $((delivered + 1)) (1 + $delivered delivered)"
grep -q "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90" "$WORK/accepted.ndjson" || fail "the mock never accepted the one notification's token"
echo "library-test: ok: built by version, 1 notification and $delivered of $records campaign records accepted by the mock" >&2
