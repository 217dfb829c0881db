#!/usr/bin/env bash
# Soak: `apns-bulk send` against `apns-bulk mock` with every fault at once (drops, GOAWAY, a stream-limit drop,
# 429/500/503, expired provider tokens, latency), killed with `kill -9` at seeded moments and resumed with
# `--resume` until finished; then scripts/soak-audit.py checks the result file against the mock's log of
# accepted notifications (one line per record, delivered within accepted, no token accepted twice, in doubt
# within 150 per lost connection). Exits non-zero on any failure; prints the figures.
#
# With SOAK_RTT=ms, the project's rtt-relay (Tests/Bench/RTTRelay: the one next to the executable, else built) stands
# between them and adds that round-trip time (half each way), as the way to APNs does.
#
# Usage: scripts/soak.sh [records, default 3000] [kill rounds, default 2]
# Environment: APNS_BULK_BIN (use this executable instead of building), SOAK_SEED (default 1), SOAK_RTT (default 0),
#   SOAK_FAULTS (replace the fault list), SOAK_CONNECTIONS (default 8), SOAK_TIMEOUT (seconds per run, default 300),
#   SOAK_KEEP=1 (keep the work directory: campaign, results, accepted log, counters, logs).
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=${1:-3000}
ROUNDS=${2:-2}
SEED=${SOAK_SEED:-1}
CONNECTIONS=${SOAK_CONNECTIONS:-8}
TIMEOUT=${SOAK_TIMEOUT:-300}
RTT=${SOAK_RTT:-0}
# Drops and GOAWAYs every few thousand requests (fewer on short soaks, so there are some), the rest by rate.
EVERY=$(( RECORDS / 6 > 5000 ? 5000 : (RECORDS / 6 < 200 ? 200 : RECORDS / 6) ))
FAULTS=${SOAK_FAULTS:-"drop=every:$EVERY,goaway=every:$(( EVERY * 3 / 2 )),lower-streams=after:$(( EVERY / 2 )):to:50,429=0.005,500=0.003,503=0.003,expired-token=every:$(( EVERY * 2 )),latency=0..5ms"}

if [ -z "${APNS_BULK_BIN:-}" ]; then
    command -v python3 >/dev/null || { bash scripts/install-deps.sh; }
    swift build --product apns-bulk >&2
    APNS_BULK_BIN="$PWD/.build/debug/apns-bulk"
fi
BIN=$APNS_BULK_BIN
if [ "$RTT" != 0 ]; then
    RELAY_BIN="$(dirname "$BIN")/rtt-relay"
    if [ ! -x "$RELAY_BIN" ]; then
        swift build --product rtt-relay >&2
        RELAY_BIN="$PWD/.build/debug/rtt-relay"
    fi
fi
WORK=$(mktemp -d)
MOCK=""
SEND=""
RELAY=""
cleanup() {
    [ -n "$SEND" ] && kill -9 "$SEND" 2>/dev/null || true
    [ -n "$MOCK" ] && kill -9 "$MOCK" 2>/dev/null || true
    [ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null || true
    if [ -n "${SOAK_KEEP:-}" ]; then echo "soak: files kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Waits up to $2 seconds for process $1 to end; returns 1 on timeout.
wait_for() {
    local pid=$1 limit=$2 waited=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        waited=$((waited + 1))
        [ "$waited" -ge $((limit * 10)) ] && return 1
    done
    return 0
}

python3 scripts/gen-campaign.py --records "$RECORDS" --out "$WORK/campaign.ndjson" --dead 0.01
"$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/port" --write-ca "$WORK/ca.pem" --key-id TEST123456 \
    --team-id TEAMID1234 --public-key samples/keys/AuthKey_TEST123456.pub.pem --topic com.example.app \
    --fault "$FAULTS" --seed "$SEED" --log-accepted "$WORK/accepted.ndjson" --counters "$WORK/counters.json" \
    2>"$WORK/mock.log" &
MOCK=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "soak: the mock did not start" >&2; cat "$WORK/mock.log" >&2; exit 1; }
PORT=$(cat "$WORK/port")
if [ "$RTT" != 0 ]; then
    "$RELAY_BIN" --target "$PORT" --delay-ms "$(awk -v r="$RTT" 'BEGIN {print r / 2}')" \
        --port-file "$WORK/relay.port" 2>"$WORK/relay.log" &
    RELAY=$!
    for _ in $(seq 1 100); do [ -s "$WORK/relay.port" ] && break; sleep 0.1; done
    [ -s "$WORK/relay.port" ] || { echo "soak: the relay did not start" >&2; cat "$WORK/relay.log" >&2; exit 1; }
    PORT=$(cat "$WORK/relay.port")
fi
send=("$BIN" send "$WORK/campaign.ndjson" --results "$WORK/results.ndjson" --endpoint "https://127.0.0.1:$PORT"
      --ca-file "$WORK/ca.pem" --key samples/keys/AuthKey_TEST123456.p8 --key-id TEST123456 --team-id TEAMID1234
      --topic com.example.app --connections "$CONNECTIONS" --progress none)

echo "soak: $RECORDS records, $ROUNDS kill rounds, seed $SEED, RTT $RTT ms, $CONNECTIONS connections, faults $FAULTS"
RANDOM=$SEED
START=$(date +%s)
KILLS=0
for round in $(seq 1 "$ROUNDS"); do
    # Kill when the result file has reached a seeded share of the campaign within this round's slice.
    target=$(( RECORDS * (100 * (round - 1) + 20 + RANDOM % 60) / (100 * (ROUNDS + 1)) ))
    resume=(); [ "$round" -gt 1 ] && resume=(--resume)
    "${send[@]}" "${resume[@]}" 2>>"$WORK/send.log" &
    SEND=$!
    waited=0
    while kill -0 "$SEND" 2>/dev/null; do
        lines=$( { wc -l < "$WORK/results.ndjson"; } 2>/dev/null || echo 0)
        [ "$lines" -ge "$target" ] && break
        sleep 0.05
        waited=$((waited + 1))
        [ "$waited" -ge $((TIMEOUT * 20)) ] && { echo "soak: round $round made no progress in ${TIMEOUT}s" >&2; exit 1; }
    done
    if kill -9 "$SEND" 2>/dev/null; then
        KILLS=$((KILLS + 1))
        echo "soak: round $round: kill -9 at $(wc -l < "$WORK/results.ndjson") result lines (target $target)"
    fi
    wait "$SEND" 2>/dev/null || true
    SEND=""
done
status=0
for attempt in 1 2 3; do
    "${send[@]}" --resume 2>>"$WORK/send.log" &
    SEND=$!
    if ! wait_for "$SEND" "$TIMEOUT"; then echo "soak: the final run took over ${TIMEOUT}s" >&2; exit 1; fi
    wait "$SEND" && status=0 || status=$?
    SEND=""
    # 0 done, 2 invalid records, 3 records left retryable or in doubt: finished; anything else: try again.
    case $status in 0|2|3) break ;; esac
    echo "soak: final run exited $status; resuming again" >&2
done
ELAPSED=$(( $(date +%s) - START ))
kill -INT "$MOCK"
wait_for "$MOCK" 30 || { echo "soak: the mock did not stop" >&2; exit 1; }
wait "$MOCK" 2>/dev/null || true
MOCK=""
grep -E "^(finished|STOPPED|interrupted)|outcomes:|requests:|in flight:" "$WORK/send.log" | tail -4 || true
echo "soak: $KILLS kills, final exit status $status, ${ELAPSED}s in all"
python3 scripts/soak-audit.py --campaign "$WORK/campaign.ndjson" --results "$WORK/results.ndjson" \
    --accepted "$WORK/accepted.ndjson" --counters "$WORK/counters.json" --kills "$KILLS" --connections "$CONNECTIONS"
