#!/usr/bin/env bash
# The main job, end to end on a fresh machine: installs the system packages, builds apns-bulk (release), starts
# the built-in mock APNs server on an ephemeral port, sends the sample campaigns to it, writes the prune list,
# prints the summary and where everything is, and stops the mock.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
echo "demo: building apns-bulk (release)..." >&2
swift build -c release --product apns-bulk >&2
BIN="$PWD/.build/release/apns-bulk"

OUT="${DEMO_OUT:-$PWD/out/demo}"
rm -rf "$OUT"
mkdir -p "$OUT"

# Generated test material (samples/keys/README.md): key id TEST123456, team id TEAMID1234.
KEY=samples/keys/AuthKey_TEST123456.p8
PUB=samples/keys/AuthKey_TEST123456.pub.pem
TOPIC=com.example.app

"$BIN" mock --listen 127.0.0.1:0 --port-file "$OUT/mock.port" --write-ca "$OUT/mock-ca.pem" \
    --key-id TEST123456 --team-id TEAMID1234 --public-key "$PUB" --topic "$TOPIC" \
    --counters "$OUT/mock-counters.json" 2>"$OUT/mock.log" &
MOCK=$!
trap 'kill "$MOCK" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$OUT/mock.port" ] && break; sleep 0.1; done
[ -s "$OUT/mock.port" ] || { echo "demo: the mock did not start:" >&2; cat "$OUT/mock.log" >&2; exit 1; }
PORT=$(cat "$OUT/mock.port")
echo "demo: mock APNs listening on https://127.0.0.1:$PORT" >&2

common=(--endpoint "https://127.0.0.1:$PORT" --ca-file "$OUT/mock-ca.pem"
        --key "$KEY" --key-id TEST123456 --team-id TEAMID1234 --topic "$TOPIC" --progress log)

status=0
echo "demo: sending samples/campaign.ndjson" >&2
"$BIN" send samples/campaign.ndjson --results "$OUT/results.ndjson" --summary "$OUT/summary.json" "${common[@]}" || status=$?
echo "demo: send exited $status (2: finished, some records invalid, as the sample intends)" >&2

echo "demo: sending samples/campaign.csv with samples/template.json" >&2
csv_status=0
"$BIN" send samples/campaign.csv --template samples/template.json --results "$OUT/results-csv.ndjson" "${common[@]}" || csv_status=$?
echo "demo: send exited $csv_status" >&2

"$BIN" prune "$OUT/results.ndjson" "$OUT/results-csv.ndjson" --format csv --output "$OUT/prune.csv"
"$BIN" report "$OUT/results.ndjson" "$OUT/results-csv.ndjson" --summary "$OUT/summary.json" \
    --html "$OUT/report.html" --json "$OUT/report.json" --title "apns-bulk demo campaign"

kill -INT "$MOCK"
wait "$MOCK" 2>/dev/null || true
trap - EXIT

cat >&2 <<TXT

demo: done.
  results:        $OUT/results.ndjson, $OUT/results-csv.ndjson (one line per input record)
  summary:        $OUT/summary.json
  report:         $OUT/report.html (open it in a browser; figures as JSON in $OUT/report.json)
  prune list:     $OUT/prune.csv ($(($(wc -l < "$OUT/prune.csv") - 1)) dead tokens)
  mock counters:  $OUT/mock-counters.json
TXT
# Exit 2 ("some records are invalid") is what the sample campaign is built to produce.
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then exit "$status"; fi
if [ "$csv_status" -ne 0 ] && [ "$csv_status" -ne 2 ]; then exit "$csv_status"; fi
