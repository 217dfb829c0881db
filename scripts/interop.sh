#!/usr/bin/env bash
# Interop check of `apns-bulk mock` against independent HTTP/2 clients: curl (one request at a time) and h2load
# (many streams per connection). Builds nothing: the binary is $APNS_BULK_BIN, else .build/debug/apns-bulk.
#
# Starts the mock on an ephemeral port with the sample TEST key (generated test material, samples/keys/), signs a
# provider token with `apns-bulk token`, then checks:
#   curl, valid token        -> 200 with an apns-id
#   curl, token ending dead  -> 410 {"reason":"Unregistered","timestamp":<ms>}
#   h2load -n 2000 -c 2 -m 100 -> 2000 answers, all 2xx (prints h2load's req/s line)
#   the counters the mock writes on SIGINT add up to the same
# Exits non-zero on the first mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${APNS_BULK_BIN:-.build/debug/apns-bulk}"
KEY=samples/keys/AuthKey_TEST123456.p8
KEY_ID=TEST123456
TEAM_ID=TEAMID1234
TOPIC=com.example.interop
TOKEN=$(printf 'ab%.0s' $(seq 1 32))                 # 64 hex digits
DEAD=$(printf '1%.0s' $(seq 1 60))dead              # the mock's suffix rule: 410 Unregistered

for tool in "$BIN" curl h2load; do
    command -v "$tool" >/dev/null || { echo "interop: $tool not found" >&2; exit 1; }
done

WORK=$(mktemp -d)
MOCK=""
cleanup() {
    if [ -n "$MOCK" ]; then kill "$MOCK" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
    echo "interop: FAIL: $*" >&2
    echo "--- mock log" >&2
    cat "$WORK/mock.log" >&2 || true
    exit 1
}

"$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/port" --write-ca "$WORK/ca.pem" \
    --key "$KEY" --key-id "$KEY_ID" --team-id "$TEAM_ID" --topic "$TOPIC" \
    --counters "$WORK/counters.json" 2>"$WORK/mock.log" &
MOCK=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || fail "the mock did not start"
PORT=$(cat "$WORK/port")
BASE="https://127.0.0.1:$PORT/3/device"
echo "interop: $(head -1 "$WORK/mock.log")"

JWT=$("$BIN" token --key "$KEY" --key-id "$KEY_ID" --team-id "$TEAM_ID")
PAYLOAD='{"aps":{"alert":"hi"}}'
printf '%s' "$PAYLOAD" >"$WORK/payload.json"

# curl: prints the response headers and body; returns the status code in $STATUS.
request() {
    local token=$1
    STATUS=$(curl -sS --http2 --cacert "$WORK/ca.pem" --max-time 10 \
        -D "$WORK/headers" -o "$WORK/body" -w '%{http_code}' \
        -H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" -d "$PAYLOAD" "$BASE/$token") \
        || fail "curl could not complete the request to $BASE/$token"
    echo "--- curl POST /3/device/$token"
    tr -d '\r' <"$WORK/headers"
    cat "$WORK/body"
    [ -s "$WORK/body" ] && echo
    return 0
}

request "$TOKEN"
[ "$STATUS" = 200 ] || fail "valid token: status $STATUS, expected 200"
grep -Eiq '^apns-id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' "$WORK/headers" \
    || fail "valid token: no apns-id header"
[ ! -s "$WORK/body" ] || fail "valid token: a 200 has no body"

request "$DEAD"
[ "$STATUS" = 410 ] || fail "dead token: status $STATUS, expected 410"
grep -Eq '^\{"reason":"Unregistered","timestamp":[0-9]{13}\}$' "$WORK/body" \
    || fail "dead token: body $(cat "$WORK/body") is not {\"reason\":\"Unregistered\",\"timestamp\":<ms>}"
grep -Eiq '^apns-id: ' "$WORK/headers" || fail "dead token: no apns-id header"

echo "--- h2load -n 2000 -c 2 -m 100"
h2load -n 2000 -c 2 -m 100 --header="authorization: bearer $JWT" --header="apns-topic: $TOPIC" \
    -d "$WORK/payload.json" "$BASE/$TOKEN" >"$WORK/h2load.out" 2>&1 || fail "h2load failed: $(cat "$WORK/h2load.out")"
grep -E '^(finished in|requests:|status codes:)' "$WORK/h2load.out"
grep -Eq '^requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored' "$WORK/h2load.out" \
    || fail "h2load did not complete 2000 requests cleanly"
grep -Eq '^status codes: 2000 2xx' "$WORK/h2load.out" || fail "h2load: not 2000 2xx"

kill -INT "$MOCK"
wait "$MOCK" || fail "the mock exited with status $?"
MOCK=""
echo "--- mock counters"
tail -n 4 "$WORK/mock.log"
grep -q '"by_status":{"200":2001,"410":1}' "$WORK/counters.json" \
    || fail "counters: $(cat "$WORK/counters.json")"
echo "interop: OK"
