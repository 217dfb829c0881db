#!/usr/bin/env bash
# Makes docs/report.png, the report screenshot in docs/RUNNING.md: a 40,000-record campaign (1 % dead tokens, a few
# invalid records and a duplicate) sent as two shards, five seconds apart, to the mock with some latency and
# 2 % 429s, then `apns-bulk report` over both shards, rendered by headless chromium. Takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v chromium >/dev/null || { echo "report-screenshot: needs chromium (apt-get install -y chromium)" >&2; exit 1; }
swift build --product apns-bulk >&2
BIN="$PWD/.build/debug/apns-bulk"
WORK=$(mktemp -d)
trap 'kill "${MOCK:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/port" --write-ca "$WORK/ca.pem" --key-id TEST123456 \
    --team-id TEAMID1234 --public-key samples/keys/AuthKey_TEST123456.pub.pem --topic com.example.app \
    --max-streams 25 --fault latency=20..60ms --fault 429=0.02 --seed 7 2>"$WORK/mock.log" &
MOCK=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done

python3 scripts/gen-campaign.py --records 40000 --dead 0.01 --out "$WORK/spring-sale.ndjson"
{
    echo '{"token":"abc","payload":{"aps":{}}}'
    head -1 "$WORK/spring-sale.ndjson"
} >> "$WORK/spring-sale.ndjson"

common=(--endpoint "https://127.0.0.1:$(cat "$WORK/port")" --ca-file "$WORK/ca.pem"
        --key "$PWD/samples/keys/AuthKey_TEST123456.p8" --key-id TEST123456 --team-id TEAMID1234
        --topic com.example.app --max-attempts 2 --progress none)
cd "$WORK"
# Exit 3 (some records left retryable) is what the 429s are for; anything above is a failure.
"$BIN" send spring-sale.ndjson --shard 0/2 --results results-0.ndjson --summary summary-0.json "${common[@]}" &
first=$!
sleep 5
status=0
"$BIN" send spring-sale.ndjson --shard 1/2 --results results-1.ndjson --summary summary-1.json "${common[@]}" || status=$?
[ "$status" -le 3 ] || exit "$status"
wait "$first" || status=$?
[ "$status" -le 3 ] || exit "$status"
"$BIN" report results-*.ndjson --summary summary-*.json --html report.html --title "Spring sale 2026 (2 shards)"
cd - >/dev/null

chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$WORK/chromium" --window-size=1000,2860 --screenshot="$PWD/docs/report.png" \
    "file://$WORK/report.html" 2>/dev/null
echo "report-screenshot: docs/report.png ($(wc -c < docs/report.png) bytes)" >&2
