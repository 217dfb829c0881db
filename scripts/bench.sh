#!/usr/bin/env bash
# Benchmarks, printed as figures (never asserted in unit tests):
#   1. `apns-bulk send` throughput against the release mock, next to h2load on the same mock with the same
#      connection and stream counts: the ratio is what later issues hold the client to.
#   2. Peak RSS of `send` for two campaign sizes: memory must not grow with the record count.
#   3. `validate` throughput (reading + validation alone).
#   4. The cost of `send --durable` (fdatasync with group commit) next to a plain `send`.
# Usage: scripts/bench.sh [records, default 200000] [large records for the memory check, default 1000000]
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=${1:-200000}
LARGE=${2:-1000000}
CONNECTIONS=${CONNECTIONS:-2}

bash scripts/install-deps.sh
swift build -c release --product apns-bulk >&2
BIN="$PWD/.build/release/apns-bulk"
WORK=$(mktemp -d)
trap 'kill "${MOCK:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

python3 scripts/gen-campaign.py --records "$RECORDS" --out "$WORK/c.ndjson"
python3 scripts/gen-campaign.py --records "$LARGE" --out "$WORK/large.ndjson"
KEY=samples/keys/AuthKey_TEST123456.p8
"$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/port" --write-ca "$WORK/ca.pem" --key-id TEST123456 \
    --team-id TEAMID1234 --public-key samples/keys/AuthKey_TEST123456.pub.pem --topic com.example.apnsbulk \
    2>"$WORK/mock.log" &
MOCK=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
common=(--endpoint "https://127.0.0.1:$PORT" --ca-file "$WORK/ca.pem" --key "$KEY" --key-id TEST123456
        --team-id TEAMID1234 --topic com.example.apnsbulk --connections "$CONNECTIONS" --progress none)

rss() { awk '/Maximum resident set size/ {print $6}' "$1"; }
seconds() { awk '/Elapsed \(wall clock\)/ {n=split($8,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$1"; }

echo "== validate: $RECORDS records"
/usr/bin/time -v "$BIN" validate "$WORK/c.ndjson" --topic com.example.apnsbulk 2>"$WORK/validate.time" >/dev/null || true
t=$(seconds "$WORK/validate.time"); echo "validate: ${t}s, $(awk -v n="$RECORDS" -v t="$t" 'BEGIN {printf "%.0f", n/t}') records/s, peak RSS $(rss "$WORK/validate.time") KiB"

echo "== send: $RECORDS records over $CONNECTIONS connections"
/usr/bin/time -v "$BIN" send "$WORK/c.ndjson" --results "$WORK/r.ndjson" "${common[@]}" 2>"$WORK/send.time" || true
grep -E "finished|outcomes|requests:" "$WORK/send.time" || true
t=$(seconds "$WORK/send.time"); SEND_RATE=$(awk -v n="$RECORDS" -v t="$t" 'BEGIN {printf "%.0f", n/t}')
echo "send: ${t}s, $SEND_RATE records/s (wall clock, start-up included), peak RSS $(rss "$WORK/send.time") KiB"

echo "== send --durable: the same campaign, result and journal lines forced to the disk (fdatasync, group commit)"
/usr/bin/time -v "$BIN" send "$WORK/c.ndjson" --results "$WORK/r-durable.ndjson" --durable "${common[@]}" \
    2>"$WORK/durable.time" || true
t=$(seconds "$WORK/durable.time"); DURABLE_RATE=$(awk -v n="$RECORDS" -v t="$t" 'BEGIN {printf "%.0f", n/t}')
echo "send --durable: ${t}s, $DURABLE_RATE records/s ($(awk -v a="$DURABLE_RATE" -v b="$SEND_RATE" \
    'BEGIN {if (b > 0) printf "%.0f%%", 100 * a / b; else print "n/a"}') of the rate without --durable)"

echo "== h2load: $RECORDS requests, $CONNECTIONS connections, 1000 streams each, same mock and payload"
JWT=$("$BIN" token --key "$KEY" --key-id TEST123456 --team-id TEAMID1234)
printf '%s' '{"aps":{"alert":{"title":"Hello","body":"Record 1"},"badge":1}}' > "$WORK/payload.json"
TOKEN=$(head -c 64 <(python3 -c "import hashlib;print(hashlib.sha256(b'bench').hexdigest())"))
h2load -n "$RECORDS" -c "$CONNECTIONS" -m 1000 -d "$WORK/payload.json" \
    -H "authorization: bearer $JWT" -H "apns-topic: com.example.apnsbulk" -H "apns-push-type: alert" \
    "https://127.0.0.1:$PORT/3/device/$TOKEN" > "$WORK/h2load.txt" 2>&1 || true
grep -E "^finished in|requests:|status codes:" "$WORK/h2load.txt" || cat "$WORK/h2load.txt"
H2_RATE=$(awk '/^finished in/ {gsub(",", "", $4); print int($4)}' "$WORK/h2load.txt")
echo "ratio send/h2load: $(awk -v a="$SEND_RATE" -v b="${H2_RATE:-0}" 'BEGIN {if (b > 0) printf "%.2f", a/b; else print "n/a"}')"

echo "== memory: send of $LARGE records"
/usr/bin/time -v "$BIN" send "$WORK/large.ndjson" --results "$WORK/large-r.ndjson" "${common[@]}" 2>"$WORK/large.time" || true
t=$(seconds "$WORK/large.time")
echo "send: ${t}s, $(awk -v n="$LARGE" -v t="$t" 'BEGIN {printf "%.0f", n/t}') records/s, peak RSS $(rss "$WORK/large.time") KiB ($RECORDS records: $(rss "$WORK/send.time") KiB)"
kill -INT "$MOCK"; wait "$MOCK" 2>/dev/null || true
tail -5 "$WORK/mock.log"
