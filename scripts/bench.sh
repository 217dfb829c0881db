#!/usr/bin/env bash
# Benchmarks of ISSUE-12, printed as figures (never asserted in unit tests). One run measures every row:
#   1. `send` -> nghttpd next to h2load -> the same nghttpd (TLS, h2, same path, headers and payload, records sharing
#      one token with --allow-duplicates, 2 connections): CPU per request (user+sys / requests) and wall-clock rate.
#   2. `validate` on VALIDATE_RECORDS distinct records next to a Python `json.loads`-per-line loop on the same file;
#      2b: `validate` again, not pinned (with two cores it runs its duplicate filter on the second).
#   3. `apns-bulk mock` next to nghttpd, both driven by `h2load -c 2 -m 100`: requests/s (and the server's CPU).
#   4. Peak RSS of `send --allow-duplicates` at RSS_SMALL and RSS_LARGE records (must stay flat).
#   5. Peak RSS of the duplicate filter: `validate` at DUP_SMALL and DUP_LARGE distinct (token, topic) pairs; bytes
#      per distinct pair above the flat base (the slope between the two sizes).
#   6. Time from process start to the first request on the wire (JWT, TCP, TLS, SETTINGS included), read from
#      `nghttpd -v` frame timestamps calibrated against this machine's monotonic clock by a probe connection.
#   7. (kept from the first benchmark) `send` -> the release mock next to `h2load -m 1000` -> the same mock.
#   8. (kept from the first benchmark) `send --durable` next to a plain `send`, both -> the release mock.
#  10. At a real round-trip time (issue 29): the project's rtt-relay (Tests/Bench/RTTRelay, built here in release) in
#      front of the mock adds RTT/2 each way on loopback
#      (handshakes and HTTP/2 flow control pay it); `send` with its defaults next to `h2load -c 3 -m 1000` (its best),
#      RTT_RECORDS distinct records at each RTT of RTTS ms, h2load sending the same requests (`-i`: each record's
#      `/3/device/<token>` once; one token repeated costs the server less: HPACK and the mock's token work); then 10d: the mock dropping a connection every DROP_EVERY
#      requests at RTT 50 ms: the records put in doubt per lost connection, and the rate against 10b's.
#  11. Rate while connections drop, no added latency: `send` (defaults) to the mock with `--fault drop=0.001` next to
#      the same to a plain mock (RTT_RECORDS records each).
#   9. Instructions executed (valgrind's callgrind), the steady stand-in for rows 1a, 2 and 3 on a noisy host: per
#      request of `send` and of h2load (row 1's set-up), per request of the mock and of nghttpd under h2load (row 3's),
#      per record of `validate` and of the Python loop (row 2's; pinned, so the filter runs on the reading thread).
#      Each side runs at INSTR_RECORDS and at twice as many; the difference divided by INSTR_RECORDS leaves the
#      process start and the set-up out.
# Each process gets its own core with taskset when two or more are available (clients on the first, servers on the
# second); the two sides of a row run interleaved (A, B, A, B ...) for ROUNDS rounds and each row prints both sides,
# best and median, and their ratio. Only 127.0.0.1 is targeted; every step is bounded by STEP_TIMEOUT seconds; the
# script exits non-zero when a step fails. Inputs are generated into a temporary directory that is removed.
#
# Usage: scripts/bench.sh [--quick] [--rounds N] [--rows 1,2,...] [--records N] [--validate-records N]
#                         [--rss-small N] [--rss-large N] [--dup-small N] [--dup-large N] [--starts N]
#                         [--instr-records N] [--rtt-records N] [--rtts "20 50 100"] [records] [large records]
# The same settings come from the environment: ROUNDS ROWS RECORDS VALIDATE_RECORDS RSS_SMALL RSS_LARGE DUP_SMALL
# DUP_LARGE STARTS INSTR_RECORDS RTT_RECORDS RTTS DROP_EVERY CONNECTIONS STEP_TIMEOUT; APNS_BULK_BIN=path skips the release build and measures that binary;
# row 6 also measures the static binary scripts/install.sh builds (APNS_BULK_STATIC_BIN=path gives one).
# --quick (small sizes, one round: a smoke check) applies where it stands, so options after it override it. The two
# positional numbers are the old usage (RECORDS and RSS_LARGE).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin"

RECORDS=${RECORDS:-200000}
VALIDATE_RECORDS=${VALIDATE_RECORDS:-1000000}
RSS_SMALL=${RSS_SMALL:-100000}
RSS_LARGE=${RSS_LARGE:-1000000}
DUP_SMALL=${DUP_SMALL:-1000000}
DUP_LARGE=${DUP_LARGE:-10000000}
STARTS=${STARTS:-7}
INSTR_RECORDS=${INSTR_RECORDS:-20000}
RTT_RECORDS=${RTT_RECORDS:-60000}
RTTS=${RTTS:-20 50 100}
DROP_EVERY=${DROP_EVERY:-2000}
ROUNDS=${ROUNDS:-3}
ROWS=${ROWS:-1,2,3,4,5,6,7,8,9,10,11}
CONNECTIONS=${CONNECTIONS:-2}
STEP_TIMEOUT=${STEP_TIMEOUT:-900}
STREAMS=100                       # nghttpd's default SETTINGS_MAX_CONCURRENT_STREAMS; h2load -m for rows 1 and 3

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --quick) RECORDS=5000; VALIDATE_RECORDS=50000; RSS_SMALL=5000; RSS_LARGE=50000; DUP_SMALL=20000
                 DUP_LARGE=200000; STARTS=3; INSTR_RECORDS=2000; RTT_RECORDS=10000; RTTS=50; ROUNDS=1 ;;
        --rounds) ROUNDS=$2; shift ;;
        --rows) ROWS=$2; shift ;;
        --records) RECORDS=$2; shift ;;
        --validate-records) VALIDATE_RECORDS=$2; shift ;;
        --rss-small) RSS_SMALL=$2; shift ;;
        --rss-large) RSS_LARGE=$2; shift ;;
        --dup-small) DUP_SMALL=$2; shift ;;
        --dup-large) DUP_LARGE=$2; shift ;;
        --starts) STARTS=$2; shift ;;
        --instr-records) INSTR_RECORDS=$2; shift ;;
        --rtt-records) RTT_RECORDS=$2; shift ;;
        --rtts) RTTS=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "bench: unknown option $1" >&2; usage >&2; exit 64 ;;
        *) positional+=("$1") ;;
    esac
    shift
done
[ ${#positional[@]} -ge 1 ] && RECORDS=${positional[0]}
[ ${#positional[@]} -ge 2 ] && RSS_LARGE=${positional[1]}
for n in "$RECORDS" "$VALIDATE_RECORDS" "$RSS_SMALL" "$RSS_LARGE" "$DUP_SMALL" "$DUP_LARGE" "$STARTS" "$ROUNDS" \
    "$INSTR_RECORDS" "$RTT_RECORDS" "$DROP_EVERY" $RTTS; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench: sizes, starts and rounds are positive integers: '$n'" >&2; exit 64; }
done
[ "$DUP_LARGE" -gt "$DUP_SMALL" ] || { echo "bench: --dup-large must exceed --dup-small" >&2; exit 64; }
row() { [[ ",$ROWS," == *",$1,"* ]]; }

# --- what the benchmark needs, installed when missing (Debian; one apt-get update before the first install)
need=()
command -v pkg-config >/dev/null || need+=(pkg-config)
pkg-config --exists libnghttp2 2>/dev/null || need+=(libnghttp2-dev)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
command -v openssl >/dev/null || need+=(openssl)
command -v nghttpd >/dev/null || need+=(nghttp2-server)
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v python3 >/dev/null || need+=(python3)
[ -x /usr/bin/time ] || need+=(time)
command -v ps >/dev/null || need+=(procps)
command -v taskset >/dev/null || need+=(util-linux)
if row 9; then
    command -v valgrind >/dev/null || need+=(valgrind)
    command -v strip >/dev/null || need+=(binutils)
fi
if [ ${#need[@]} -gt 0 ]; then
    echo "bench: installing ${need[*]}" >&2
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

if [ -n "${APNS_BULK_BIN:-}" ]; then
    BIN=$(realpath "$APNS_BULK_BIN")            # a binary built elsewhere (it should be a release build)
else
    swift build -c release --product apns-bulk >&2
    BIN="$PWD/.build/release/apns-bulk"
fi
# The relay of row 10 (Tests/Bench/RTTRelay): the one next to a binary built elsewhere, else built here.
if row 10; then
    RELAY_BIN="$(dirname "$BIN")/rtt-relay"
    if [ -z "${APNS_BULK_BIN:-}" ] || [ ! -x "$RELAY_BIN" ]; then
        swift build -c release --product rtt-relay >&2
        RELAY_BIN="$PWD/.build/release/rtt-relay"
    fi
fi
KEY=samples/keys/AuthKey_TEST123456.p8
PUB=samples/keys/AuthKey_TEST123456.pub.pem
AUTH=(--key "$KEY" --key-id TEST123456 --team-id TEAMID1234)
TOPIC=com.example.app
TOKEN=$(printf 'ab%.0s' $(seq 1 32))            # the one token of the --allow-duplicates campaigns (64 hex digits)
PAYLOAD='{"aps":{"alert":{"title":"Hello","body":"Record 1"},"badge":1}}'

WORK=$(mktemp -d)
SERVERS=()
cleanup() {
    for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "bench: FAIL: $*" >&2; exit 1; }

# --- cores: the clients on one, the servers on another, when there are two
read -r CLIENT_CORE SERVER_CORE < <(python3 -c 'import os
c = sorted(os.sched_getaffinity(0))
print(c[0], c[1] if len(c) > 1 else "")')
if [ -n "$SERVER_CORE" ]; then
    CLIENT=(taskset -c "$CLIENT_CORE"); SERVER=(taskset -c "$SERVER_CORE")
    PINNING="clients on core $CLIENT_CORE, servers on core $SERVER_CORE (taskset)"
else
    CLIENT=(); SERVER=(); PINNING="not pinned (one core)"
fi

echo "== machine"
echo "nproc $(nproc); CPU $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo); kernel $(uname -r)"
echo "$(swift --version 2>&1 | head -1); $(nghttpd --version 2>&1 | head -1); $(h2load --version 2>&1 | head -1);" \
    "$(python3 --version)"
echo "binary $BIN; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown);" \
    "$(date -u '+%Y-%m-%d %H:%M UTC'); load at start:$(uptime | sed 's/.*load average://')"
echo "$PINNING; rounds $ROUNDS (interleaved); rows $ROWS"
awk '{exit !($1 >= 1.5)}' /proc/loadavg \
    && echo "warning: load $(cut -d' ' -f1 /proc/loadavg) (1 min): other processes compete for the cores, figures are noisy"
echo "sizes: requests $RECORDS, validate $VALIDATE_RECORDS, send RSS $RSS_SMALL/$RSS_LARGE," \
    "filter RSS $DUP_SMALL/$DUP_LARGE, starts $STARTS, instructions $INSTR_RECORDS/$((2 * INSTR_RECORDS))," \
    "RTT rows $RTT_RECORDS at ${RTTS// //} ms"

# --- helpers
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
    python3 - "$1" <<'EOF' || fail "nothing listens on 127.0.0.1:$1"
import socket, sys, time
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
}
# timed NAME cmd...: runs cmd on the client core under /usr/bin/time; sets WALL (s), CPU (user+sys s), RSS (KiB), RC.
UNPINNED=0                        # 1: `timed` leaves the process free to use every core (row 2b)
timed() {
    local name=$1; shift
    local t0=$EPOCHREALTIME
    local pin=("${CLIENT[@]}")
    [ "$UNPINNED" = 1 ] && pin=()
    RC=0
    "${pin[@]}" timeout "$STEP_TIMEOUT" /usr/bin/time -f '%U %S %M' -o "$WORK/$name.rusage" "$@" || RC=$?
    local t1=$EPOCHREALTIME
    WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')
    read -r u s RSS < <(tail -1 "$WORK/$name.rusage")
    CPU=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }         # user+sys of a running process, in clock ticks
TICK=$(getconf CLK_TCK)
add() { echo "$2" >> "$WORK/v.$1"; }                              # add SERIES VALUE
# The statistics and the printed rows (best = lowest for costs, highest for rates).
cat > "$WORK/stats.py" <<'EOF'
import statistics, sys
def vals(name):
    with open(sys.argv[1] + "/v." + name) as f:
        return [float(x) for x in f.read().split()]
def best(v, higher):
    return max(v) if higher else min(v)
def fmt(x):
    return f"{x:,.0f}" if abs(x) >= 1000 else (f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}")
cmd, args = sys.argv[2], sys.argv[3:]
if cmd == "pair":        # pair TITLE UNIT higher|lower A_LABEL A_SERIES B_LABEL B_SERIES GOAL
    title, unit, direction, la, sa, lb, sb, goal = args
    higher = direction == "higher"
    a, b = vals(sa), vals(sb)
    ba, bb, ma, mb = best(a, higher), best(b, higher), statistics.median(a), statistics.median(b)
    print(f"{title}: {la} best {fmt(ba)} {unit}, median {fmt(ma)} | {lb} best {fmt(bb)} {unit}, median {fmt(mb)}"
          f" | ratio best {ba / bb:.2f}x, median {ma / mb:.2f}x (goal {goal}) [{len(a)}+{len(b)} runs]")
elif cmd == "one":       # one TITLE UNIT higher|lower SERIES GOAL
    title, unit, direction, s, goal = args
    v = vals(s)
    print(f"{title}: best {fmt(best(v, direction == 'higher'))} {unit}, median {fmt(statistics.median(v))} {unit}"
          f" (goal {goal}) [{len(v)} runs]")
EOF
report() { python3 "$WORK/stats.py" "$WORK" "$@" | tee -a "$WORK/table"; }

# --- inputs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
mkdir -p "$WORK/htdocs/3/device"
: > "$WORK/htdocs/3/device/$TOKEN"                  # nghttpd answers 200 to a POST on a path that exists
printf '%s' "$PAYLOAD" > "$WORK/payload.json"
same_token() {  # same_token N FILE: N identical records, one token, the h2load payload byte for byte
    awk -v n="$1" -v l="{\"token\":\"$TOKEN\",\"payload\":$PAYLOAD}" 'BEGIN {for (i = 0; i < n; i++) print l}' > "$2"
}
JWT=$("$BIN" token "${AUTH[@]}")
H2HEADERS=(-H "authorization: bearer $JWT" -H "apns-topic: $TOPIC" -H "apns-push-type: alert")

start_nghttpd() {  # start_nghttpd LOG [nghttpd options]: sets NG_PID, NG_PORT
    local log=$1; shift
    NG_PORT=$(free_port)
    "${SERVER[@]}" nghttpd "$@" -a 127.0.0.1 -d "$WORK/htdocs" "$NG_PORT" "$WORK/key.pem" "$WORK/cert.pem" \
        > "$log" 2>&1 &
    NG_PID=$!; SERVERS+=("$NG_PID")
    wait_port "$NG_PORT"
}
start_mock() {  # start_mock NAME [mock options]: sets MOCK_PID, MOCK_PORT, MOCK_CA
    local name=$1; shift
    rm -f "$WORK/$name.port"
    "${SERVER[@]}" "$BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --write-ca "$WORK/$name.ca.pem" \
        --key-id TEST123456 --team-id TEAMID1234 --public-key "$PUB" --topic "$TOPIC" "$@" 2>"$WORK/$name.log" &
    MOCK_PID=$!; SERVERS+=("$MOCK_PID")
    for _ in $(seq 1 200); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
    [ -s "$WORK/$name.port" ] || fail "the mock did not start: $(cat "$WORK/$name.log")"
    MOCK_PORT=$(cat "$WORK/$name.port"); MOCK_CA="$WORK/$name.ca.pem"
}

# run_send NAME N ENDPOINT_PORT CA FILE [send options]: one timed send that must deliver all N records (unless
# SEND_MAY_LOSE=1: then it may end with status 3, records in doubt). SEND_CONNECTIONS: the connection options
# (`--connections $CONNECTIONS` unless set; empty for send's defaults).
run_send() {
    local name=$1 n=$2 port=$3 ca=$4 file=$5; shift 5
    local connections=(--connections "$CONNECTIONS")
    [ -n "${SEND_CONNECTIONS+set}" ] && read -r -a connections <<< "$SEND_CONNECTIONS"
    rm -f "$WORK/$name.results"*
    timed "$name" "$BIN" send "$file" --results "$WORK/$name.results" --endpoint "https://127.0.0.1:$port" \
        --ca-file "$ca" "${AUTH[@]}" --topic "$TOPIC" "${connections[@]}" --progress none "$@" \
        2>"$WORK/$name.err"
    if [ "${SEND_MAY_LOSE:-0}" = 1 ] && [ "$RC" -eq 3 ]; then return 0; fi
    [ "$RC" -eq 0 ] || fail "send ($name) exited $RC: $(tail -5 "$WORK/$name.err")"
    local delivered; delivered=$(grep -c '"outcome":"delivered"' "$WORK/$name.results" || true)
    [ "$delivered" -eq "$n" ] || fail "send ($name): $delivered of $n records delivered"
}
# run_h2load NAME N PORT STREAMS [CONNECTIONS]: one timed h2load run that must get N 2xx answers; sets H2_RATE (its
# own req/s).
# With H2_TOKENS=file (one device token a line), the requests go to /3/device/<token> for each token in turn (h2load
# -i), not all to one token.
run_h2load() {
    local name=$1 n=$2 port=$3 streams=$4 connections=${5:-$CONNECTIONS} target
    target=("https://127.0.0.1:$port/3/device/$TOKEN")
    if [ -n "${H2_TOKENS:-}" ]; then
        sed "s|^|https://127.0.0.1:$port/3/device/|" "$H2_TOKENS" > "$WORK/$name.uris"
        target=(-i "$WORK/$name.uris")
    fi
    timed "$name" h2load -n "$n" -c "$connections" -m "$streams" -t 1 -d "$WORK/payload.json" "${H2HEADERS[@]}" \
        "${target[@]}" > "$WORK/$name.out" 2>&1
    [ "$RC" -eq 0 ] || fail "h2load ($name) exited $RC: $(tail -5 "$WORK/$name.out")"
    grep -Eq "^status codes: $n 2xx" "$WORK/$name.out" \
        || fail "h2load ($name): $(grep -E '^(requests|status codes):' "$WORK/$name.out")"
    H2_RATE=$(awk '/^finished in/ {gsub(",", "", $4); print $4}' "$WORK/$name.out")
}
per_request_us() { awk -v c="$1" -v n="$2" 'BEGIN {printf "%.3f", c / n * 1e6}'; }
server_us() { awk -v a="$1" -v b="$2" -v t="$TICK" -v n="$3" 'BEGIN {printf "%.3f", (b - a) / t / n * 1e6}'; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN {printf "%.0f", n / t}'; }

# --- 1. send -> nghttpd vs h2load -> nghttpd
if row 1; then
    echo "== 1. send -> nghttpd vs h2load -> nghttpd: $RECORDS requests, one token, $CONNECTIONS connections," \
        "h2load -m $STREAMS"
    same_token "$RECORDS" "$WORK/same.ndjson"
    start_nghttpd "$WORK/nghttpd1.log"
    for r in $(seq 1 "$ROUNDS"); do
        run_send send1 "$RECORDS" "$NG_PORT" "$WORK/cert.pem" "$WORK/same.ndjson" --allow-duplicates
        add send1.cpu "$(per_request_us "$CPU" "$RECORDS")"; add send1.rate "$(rate "$RECORDS" "$WALL")"
        echo "round $r: send   ${WALL}s wall, ${CPU}s CPU, $(rate "$RECORDS" "$WALL") req/s"
        run_h2load h2load1 "$RECORDS" "$NG_PORT" "$STREAMS"
        add h2load1.cpu "$(per_request_us "$CPU" "$RECORDS")"; add h2load1.rate "$(rate "$RECORDS" "$WALL")"
        echo "round $r: h2load ${WALL}s wall, ${CPU}s CPU, $(rate "$RECORDS" "$WALL") req/s (its own figure: $H2_RATE)"
    done
    kill "$NG_PID"
    report pair "1a send -> nghttpd, CPU per request" "us" lower send send1.cpu h2load h2load1.cpu "<= 1.5x"
    report pair "1b send -> nghttpd, wall-clock rate" "req/s" higher send send1.rate h2load h2load1.rate ">= 0.7x"
fi

# --- 2. validate vs a Python json.loads-per-line loop
if row 2 || row 5; then
    echo "== generating $VALIDATE_RECORDS distinct records"
    "${SERVER[@]}" python3 scripts/gen-campaign.py --records "$VALIDATE_RECORDS" --out "$WORK/distinct.ndjson"
fi
if row 2; then
    echo "== 2. validate vs Python json.loads per line: $VALIDATE_RECORDS records"
    for r in $(seq 1 "$ROUNDS"); do
        timed validate2 "$BIN" validate "$WORK/distinct.ndjson" --topic "$TOPIC" 2>"$WORK/validate2.err"
        [ "$RC" -eq 0 ] || fail "validate exited $RC: $(tail -5 "$WORK/validate2.err")"
        add validate2.rate "$(rate "$VALIDATE_RECORDS" "$WALL")"
        echo "round $r: validate ${WALL}s wall, $(rate "$VALIDATE_RECORDS" "$WALL") records/s, peak RSS $RSS KiB"
        if [ -n "$SERVER_CORE" ]; then
            # 2b: the same, not pinned: with a second core, validate runs its duplicate filter there.
            UNPINNED=1
            timed validate2b "$BIN" validate "$WORK/distinct.ndjson" --topic "$TOPIC" 2>"$WORK/validate2.err"
            UNPINNED=0
            [ "$RC" -eq 0 ] || fail "validate exited $RC: $(tail -5 "$WORK/validate2.err")"
            add validate2b.rate "$(rate "$VALIDATE_RECORDS" "$WALL")"
            echo "round $r: validate ${WALL}s wall, $(rate "$VALIDATE_RECORDS" "$WALL") records/s, not pinned (${CPU}s CPU)"
        fi
        timed python2 python3 -c 'import json, sys
for line in open(sys.argv[1], "rb"):
    json.loads(line)' "$WORK/distinct.ndjson"
        [ "$RC" -eq 0 ] || fail "the Python loop exited $RC"
        add python2.rate "$(rate "$VALIDATE_RECORDS" "$WALL")"
        echo "round $r: python   ${WALL}s wall, $(rate "$VALIDATE_RECORDS" "$WALL") records/s"
    done
    report pair "2  validate, $VALIDATE_RECORDS records" "records/s" higher validate validate2.rate \
        "python json.loads" python2.rate ">= 6x"
    if [ -n "$SERVER_CORE" ]; then
        report pair "2b validate not pinned (the filter on the second core), $VALIDATE_RECORDS records" "records/s" \
            higher validate validate2b.rate "python json.loads (pinned)" python2.rate ">= 6x"
    fi
fi

# --- 3. the mock vs nghttpd, both driven by h2load
if row 3; then
    echo "== 3. h2load -c $CONNECTIONS -m $STREAMS -> mock vs -> nghttpd: $RECORDS requests"
    start_nghttpd "$WORK/nghttpd3.log"
    start_mock mock3
    for r in $(seq 1 "$ROUNDS"); do
        before=$(cpu_ticks "$MOCK_PID"); n=$RECORDS
        run_h2load h2mock3 "$RECORDS" "$MOCK_PORT" "$STREAMS"
        add mock3.rate "$H2_RATE"
        add mock3.cpu "$(server_us "$before" "$(cpu_ticks "$MOCK_PID")" "$n")"
        echo "round $r: mock    $H2_RATE req/s"
        before=$(cpu_ticks "$NG_PID")
        run_h2load h2ng3 "$RECORDS" "$NG_PORT" "$STREAMS"
        add nghttpd3.rate "$H2_RATE"
        add nghttpd3.cpu "$(server_us "$before" "$(cpu_ticks "$NG_PID")" "$n")"
        echo "round $r: nghttpd $H2_RATE req/s"
    done
    kill "$NG_PID" "$MOCK_PID"
    report pair "3a mock vs nghttpd under h2load, rate" "req/s" higher mock mock3.rate nghttpd nghttpd3.rate ">= 0.8x"
    report pair "3b mock vs nghttpd under h2load, server CPU per request" "us" lower mock mock3.cpu \
        nghttpd nghttpd3.cpu "none"
fi

# --- 4. peak RSS of send --allow-duplicates
if row 4; then
    echo "== 4. peak RSS of send --allow-duplicates -> nghttpd: $RSS_SMALL and $RSS_LARGE records"
    start_nghttpd "$WORK/nghttpd4.log"
    for n in "$RSS_SMALL" "$RSS_LARGE"; do
        same_token "$n" "$WORK/rss.ndjson"
        run_send send4 "$n" "$NG_PORT" "$WORK/cert.pem" "$WORK/rss.ndjson" --allow-duplicates
        add "send4.$n" "$(awk -v k="$RSS" 'BEGIN {printf "%.1f", k / 1024}')"
        echo "send --allow-duplicates, $n records: peak RSS $RSS KiB (${WALL}s, $(rate "$n" "$WALL") req/s)"
    done
    rm -f "$WORK/rss.ndjson"
    kill "$NG_PID"
    report one "4a peak RSS, send --allow-duplicates, $RSS_SMALL records" MiB lower "send4.$RSS_SMALL" "<= 40 MB"
    report one "4b peak RSS, send --allow-duplicates, $RSS_LARGE records" MiB lower "send4.$RSS_LARGE" "<= 40 MB"
fi

# --- 5. peak RSS of the duplicate filter
if row 5; then
    echo "== 5. peak RSS of the duplicate filter (validate, distinct pairs from standard input):" \
        "$DUP_SMALL and $DUP_LARGE"
    for n in "$DUP_SMALL" "$DUP_LARGE"; do
        t0=$EPOCHREALTIME
        "${SERVER[@]}" timeout "$STEP_TIMEOUT" python3 scripts/gen-campaign.py --records "$n" \
            | "${CLIENT[@]}" timeout "$STEP_TIMEOUT" /usr/bin/time -f '%M' -o "$WORK/dup.rusage" \
                "$BIN" validate - --topic "$TOPIC" >/dev/null 2>"$WORK/dup.err" \
            || fail "validate of $n distinct records from standard input failed: $(tail -5 "$WORK/dup.err")"
        rss=$(tail -1 "$WORK/dup.rusage"); echo "$rss" > "$WORK/dup.$n"
        echo "validate, $n distinct pairs: peak RSS $rss KiB" \
            "($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}')s with the generator)"
    done
    python3 - "$DUP_SMALL" "$(cat "$WORK/dup.$DUP_SMALL")" "$DUP_LARGE" "$(cat "$WORK/dup.$DUP_LARGE")" <<'EOF' \
        | tee -a "$WORK/table"
import sys
ns, ks, nl, kl = (int(x) for x in sys.argv[1:])
slope = (kl - ks) * 1024 / (nl - ns)
base = ks * 1024 - slope * ns
print(f"5  duplicate filter: peak RSS {ks / 1024:.0f} MiB at {ns:,} pairs, {kl / 1024:.0f} MiB at {nl:,}:"
      f" {slope:.1f} bytes per distinct pair above a flat base of {base / 2**20:.0f} MiB"
      f" ({kl * 1024 / nl:.1f} bytes per pair counting the whole RSS at {nl:,}) (goal <= 10 bytes per pair)")
EOF
fi

# --- 6. time from process start to the first request on the wire
if row 6; then
    echo "== 6. start to first request -> nghttpd -v: $STARTS starts of send (1 record)," \
        "each next to one of h2load -n 1"
    echo "   (h2load is the floor: process start, TCP and TLS, without JWT signing or reading a campaign)"
    start_nghttpd "$WORK/nghttpd6.log" -v
    same_token 1 "$WORK/one.ndjson"
    cat > "$WORK/startup.py" <<'EOF'
# nghttpd -v stamps each frame with seconds on its own monotonic timer. A probe connection sends its SETTINGS at a
# known time.monotonic(), which gives the offset between that timer and ours; then each start of the command is
# timed from just before its spawn to the first request header nghttpd logs (and, for a breakdown, to the client's
# first SETTINGS frame: process start, JWT, TCP and TLS done).
import os, re, socket, ssl, subprocess, sys, time
port, log, starts = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
out_first, out_settings, cmd = sys.argv[4], sys.argv[5], sys.argv[6:]
results = cmd[cmd.index("--results") + 1] if "--results" in cmd else None
frame = re.compile(r"^\[id=(\d+)\] \[\s*([0-9.]+)\] (.*)$")

def new_lines(offset):
    time.sleep(0.2)                      # nghttpd writes its log as it goes
    with open(log, "rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace").splitlines()

def first(lines, test):
    for line in lines:
        m = frame.match(line)
        if m and test(m.group(3)):
            return int(m.group(1)), float(m.group(2))
    raise SystemExit(f"start-up: no such frame in nghttpd's log: {lines[:20]}")

ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])
skew = None                              # our monotonic time = nghttpd's stamp + skew (to its 1 ms resolution)
for _ in range(3):                       # the probe nghttpd saw soonest gives the best estimate
    offset = os.path.getsize(log)
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10)) as probe:
        sent = time.monotonic()
        probe.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        probe.recv(64)
    _, stamp = first(new_lines(offset), lambda t: t.startswith("recv SETTINGS frame") and "flags=0x00" in t)
    skew = sent - stamp if skew is None else max(skew, sent - stamp)

with open(out_first, "a") as ff, open(out_settings, "a") as fs:
    for k in range(starts):
        for suffix in ("", ".journal") if results else ():
            try:
                os.remove(results + suffix)
            except FileNotFoundError:
                pass
        offset = os.path.getsize(log)
        t0 = time.monotonic()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60).returncode
        if rc != 0:
            raise SystemExit(f"start-up: send exited {rc}")
        lines = new_lines(offset)
        _, settings = first(lines, lambda t: t.startswith("recv SETTINGS frame") and "flags=0x00" in t)
        _, headers = first(lines, lambda t: t.startswith("recv (stream_id=") or t.startswith("recv HEADERS frame"))
        ms_settings, ms_headers = (settings + skew - t0) * 1000, (headers + skew - t0) * 1000
        print(f"client SETTINGS at {ms_settings:.1f} ms, first request HEADERS at {ms_headers:.1f} ms")
        ff.write(f"{ms_headers:.3f}\n")
        fs.write(f"{ms_settings:.3f}\n")
EOF
    startup() {  # startup SERIES cmd...: one timed start of cmd
        echo -n "$1: "
        "${CLIENT[@]}" timeout "$STEP_TIMEOUT" python3 "$WORK/startup.py" "$NG_PORT" "$WORK/nghttpd6.log" 1 \
            "$WORK/v.$1.first" "$WORK/v.$1.settings" "${@:2}" || fail "the start-up measurement ($1) failed"
    }
    # The binary scripts/install.sh installs links the Swift runtime and Foundation statically: no dynamic loading
    # of them at start. Measured next to the release build (APNS_BULK_STATIC_BIN=path gives one built elsewhere).
    STATIC_BIN=
    if [ -n "${APNS_BULK_STATIC_BIN:-}" ]; then
        STATIC_BIN=$(realpath "$APNS_BULK_STATIC_BIN")
    elif [ -z "${APNS_BULK_BIN:-}" ]; then
        swift build -c release --static-swift-stdlib --scratch-path .build-static --product apns-bulk >&2
        STATIC_BIN="$PWD/.build-static/release/apns-bulk"
    fi
    for r in $(seq 1 "$STARTS"); do
        startup send "$BIN" send "$WORK/one.ndjson" --results "$WORK/one.results" \
            --endpoint "https://127.0.0.1:$NG_PORT" --ca-file "$WORK/cert.pem" "${AUTH[@]}" --topic "$TOPIC" \
            --connections "$CONNECTIONS" --progress none --allow-duplicates --overwrite
        if [ -n "$STATIC_BIN" ]; then
            startup static "$STATIC_BIN" send "$WORK/one.ndjson" --results "$WORK/one.results" \
                --endpoint "https://127.0.0.1:$NG_PORT" --ca-file "$WORK/cert.pem" "${AUTH[@]}" --topic "$TOPIC" \
                --connections "$CONNECTIONS" --progress none --allow-duplicates --overwrite
        fi
        startup h2load h2load -n 1 -c 1 -m 1 -t 1 -d "$WORK/payload.json" "${H2HEADERS[@]}" \
            "https://127.0.0.1:$NG_PORT/3/device/$TOKEN"
    done
    kill "$NG_PID"
    report pair "6a start to the client's first SETTINGS (JWT, TCP, TLS)" ms lower send send.settings \
        h2load h2load.settings "none"
    report pair "6b start to the first request HEADERS on the wire" ms lower send send.first \
        h2load h2load.first "send < 100 ms"
    if [ -n "$STATIC_BIN" ]; then
        report pair "6c the same, the installed binary (scripts/install.sh: static Swift runtime)" ms lower \
            send-static static.first h2load h2load.first "send < 100 ms"
    fi
fi

# --- 7 and 8. kept from the first benchmark: send and send --durable -> the release mock, h2load -m 1000 -> the mock
if row 7 || row 8; then
    echo "== 7/8. send, send --durable and h2load -m 1000 -> the release mock: $RECORDS distinct records"
    "${SERVER[@]}" python3 scripts/gen-campaign.py --records "$RECORDS" --out "$WORK/mock-campaign.ndjson"
    start_mock mock7
    for r in $(seq 1 "$ROUNDS"); do
        run_send send7 "$RECORDS" "$MOCK_PORT" "$MOCK_CA" "$WORK/mock-campaign.ndjson"
        add send7.rate "$(rate "$RECORDS" "$WALL")"
        echo "round $r: send          $(rate "$RECORDS" "$WALL") records/s, peak RSS $RSS KiB"
        if row 7; then
            run_h2load h2load7 "$RECORDS" "$MOCK_PORT" 1000
            add h2load7.rate "$(rate "$RECORDS" "$WALL")"
            echo "round $r: h2load        $(rate "$RECORDS" "$WALL") req/s"
        fi
        if row 8; then
            run_send durable8 "$RECORDS" "$MOCK_PORT" "$MOCK_CA" "$WORK/mock-campaign.ndjson" --durable
            add durable8.rate "$(rate "$RECORDS" "$WALL")"
            echo "round $r: send --durable $(rate "$RECORDS" "$WALL") records/s"
        fi
    done
    kill -INT "$MOCK_PID"
    if row 7; then
        report pair "7  send -> mock vs h2load -m 1000 -> mock" req/s higher send send7.rate h2load h2load7.rate "none"
    fi
    if row 8; then
        report pair "8  send --durable vs send, -> mock" records/s higher durable durable8.rate send send7.rate "none"
    fi
fi

# --- 10 and 11. at a real round-trip time, and while connections drop
start_relay() {  # start_relay NAME TARGET_PORT ONE_WAY_MS: sets RELAY_PID, RELAY_PORT
    rm -f "$WORK/$1.port"
    "${SERVER[@]}" "$RELAY_BIN" --target "$2" --delay-ms "$3" --port-file "$WORK/$1.port" \
        2>"$WORK/$1.log" &
    RELAY_PID=$!; SERVERS+=("$RELAY_PID")
    for _ in $(seq 1 200); do [ -s "$WORK/$1.port" ] && break; sleep 0.05; done
    [ -s "$WORK/$1.port" ] || fail "the relay did not start: $(cat "$WORK/$1.log")"
    RELAY_PORT=$(cat "$WORK/$1.port")
}
outcomes() { grep -c "\"outcome\":\"$2\"" "$WORK/$1.results" || true; }   # outcomes NAME OUTCOME: lines with it
if row 10 || row 11; then
    "${SERVER[@]}" python3 scripts/gen-campaign.py --records "$RTT_RECORDS" --out "$WORK/rtt.ndjson"
    python3 -c 'import json, sys
for line in open(sys.argv[1]): print(json.loads(line)["token"])' "$WORK/rtt.ndjson" > "$WORK/rtt.tokens"
fi
if row 10; then
    echo "== 10. at a real round-trip time: send (its defaults) vs h2load -c 3 -m 1000 through rtt-relay" \
        "-> the mock, $RTT_RECORDS records (h2load: the same device tokens); the relay and the mock on the server core"
    start_mock mock10
    for rtt in $RTTS; do
        start_relay "relay$rtt" "$MOCK_PORT" "$(awk -v r="$rtt" 'BEGIN {print r / 2}')"
        for r in $(seq 1 "$ROUNDS"); do
            SEND_CONNECTIONS="" run_send "send10_$rtt" "$RTT_RECORDS" "$RELAY_PORT" "$MOCK_CA" "$WORK/rtt.ndjson" \
                --summary "$WORK/send10_$rtt.summary.json"
            add "send10_$rtt.rate" "$(rate "$RTT_RECORDS" "$WALL")"
            opened=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(s["maximum_in_flight"])' "$WORK/send10_$rtt.summary.json")
            echo "round $r, RTT $rtt ms: send   $(rate "$RTT_RECORDS" "$WALL") req/s (${WALL}s, at most $opened in flight)"
            H2_TOKENS="$WORK/rtt.tokens" run_h2load "h2load10_$rtt" "$RTT_RECORDS" "$RELAY_PORT" 1000 3
            add "h2load10_$rtt.rate" "$(rate "$RTT_RECORDS" "$WALL")"
            echo "round $r, RTT $rtt ms: h2load $(rate "$RTT_RECORDS" "$WALL") req/s (its own figure: $H2_RATE)"
        done
        kill "$RELAY_PID"
        report pair "10 RTT $rtt ms: send (defaults) vs h2load -c 3 -m 1000, rate" "req/s" higher send \
            "send10_$rtt.rate" h2load "h2load10_$rtt.rate" ">= 1.0x"
    done
    kill -INT "$MOCK_PID"

    echo "== 10d. RTT 50 ms, the mock dropping a connection every $DROP_EVERY requests: send (its defaults)"
    start_mock mock10d --fault "drop=every:$DROP_EVERY"
    start_relay relay10d "$MOCK_PORT" 25
    for r in $(seq 1 "$ROUNDS"); do
        SEND_CONNECTIONS="" SEND_MAY_LOSE=1 run_send send10d "$RTT_RECORDS" "$RELAY_PORT" "$MOCK_CA" "$WORK/rtt.ndjson" \
            --summary "$WORK/send10d.summary.json"
        requests=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"])' "$WORK/send10d.summary.json")
        drops=$((requests / DROP_EVERY)); [ "$drops" -gt 0 ] || drops=1
        doubt=$(outcomes send10d in_doubt)
        add send10d.doubt "$(awk -v d="$doubt" -v n="$drops" 'BEGIN {printf "%.1f", d / n}')"
        add send10d.rate "$(rate "$RTT_RECORDS" "$WALL")"
        echo "round $r: $(rate "$RTT_RECORDS" "$WALL") records/s, $requests requests, about $drops connections dropped," \
            "$doubt records in doubt ($(awk -v d="$doubt" -v n="$drops" 'BEGIN {printf "%.0f", d / n}') a connection)"
    done
    kill "$RELAY_PID"; kill -INT "$MOCK_PID"
    report one "10d RTT 50 ms, a connection dropped every $DROP_EVERY requests: records in doubt per lost connection" \
        records lower send10d.doubt "<= 150"
    if [[ " $RTTS " == *" 50 "* ]]; then
        report pair "10e RTT 50 ms: rate with those drops vs without (10 at 50 ms)" "records/s" higher drops send10d.rate \
            "no drops" send10_50.rate ">= 0.8x"
    fi
fi
if row 11; then
    echo "== 11. while connections drop: send (its defaults) -> the mock with --fault drop=0.001 vs -> a plain mock," \
        "$RTT_RECORDS records, no added latency"
    start_mock mock11
    plain_port=$MOCK_PORT; plain_pid=$MOCK_PID; plain_ca=$MOCK_CA
    start_mock mock11d --fault drop=0.001
    for r in $(seq 1 "$ROUNDS"); do
        SEND_CONNECTIONS="" SEND_MAY_LOSE=1 run_send send11d "$RTT_RECORDS" "$MOCK_PORT" "$MOCK_CA" "$WORK/rtt.ndjson"
        add send11d.rate "$(rate "$RTT_RECORDS" "$WALL")"
        echo "round $r: drops    $(rate "$RTT_RECORDS" "$WALL") records/s, $(outcomes send11d in_doubt) in doubt"
        SEND_CONNECTIONS="" run_send send11 "$RTT_RECORDS" "$plain_port" "$plain_ca" "$WORK/rtt.ndjson"
        add send11.rate "$(rate "$RTT_RECORDS" "$WALL")"
        echo "round $r: no drops $(rate "$RTT_RECORDS" "$WALL") records/s"
    done
    kill -INT "$MOCK_PID" "$plain_pid"
    report pair "11 send (defaults) while the mock drops a connection on 0.1 % of requests vs none" "records/s" higher \
        drops send11d.rate "no drops" send11.rate ">= 0.8x"
fi

# --- 9. instructions executed (callgrind): rows 1a, 2 and 3 counted instead of timed
if row 9; then
    N9=$INSTR_RECORDS
    echo "== 9. instructions (valgrind --tool=callgrind), $N9 and $((2 * N9)) requests or records a side"
    # counted NAME cmd...: cmd under callgrind on the client core; adds its instruction count to series NAME.
    counted() {
        local name=$1; shift
        RC=0
        "${CLIENT[@]}" timeout "$STEP_TIMEOUT" valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.cg" "$@" \
            > "$WORK/$name.out" 2> "$WORK/$name.vg" || RC=$?
        [ "$RC" -eq 0 ] || fail "$name under callgrind exited $RC: $(tail -3 "$WORK/$name.vg")"
        add_count "$name"
    }
    add_count() {  # add_count NAME: the count callgrind wrote to NAME.cg, added to series NAME
        local instructions
        instructions=$(awk '/^summary:/ {print $2; exit}' "$WORK/$1.cg" 2>/dev/null || true)
        [ -n "$instructions" ] || fail "callgrind ($1) wrote no count: $(tail -3 "$WORK/$1.vg")"
        add "$1" "$instructions"
    }
    # counted_server NAME PORT cmd...: a server under callgrind on the server core, listening on PORT (`file`: the
    # port the mock writes to mock9.port once it listens); h2load sends it N9 or 2 * N9 requests (the series' next
    # size), then SIGTERM ends it and callgrind writes its count.
    counted_server() {
        local name=$1 port=$2 n=$N9; shift 2
        [ -s "$WORK/v.$name" ] && n=$((2 * N9))
        "${SERVER[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.cg" "$@" \
            > "$WORK/$name.out" 2> "$WORK/$name.vg" &
        local pid=$!; SERVERS+=("$pid")
        [ "$port" = file ] && { for _ in $(seq 1 600); do [ -s "$WORK/mock9.port" ] && break; sleep 0.05; done
                                port=$(cat "$WORK/mock9.port" 2>/dev/null || echo 0); }
        wait_port "$port"
        "${CLIENT[@]}" h2load -n "$n" -c "$CONNECTIONS" -m "$STREAMS" -t 1 -d "$WORK/payload.json" "${H2HEADERS[@]}" \
            "https://127.0.0.1:$port/3/device/$TOKEN" > "$WORK/$name.h2load" 2>&1 || true
        grep -Eq "^status codes: $n 2xx" "$WORK/$name.h2load" || fail "h2load -> $name under callgrind: not $n 2xx"
        kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
        add_count "$name"
    }
    # The printed row: each side's instructions per item, (count at 2 * N9 - count at N9) / N9, and their ratio:
    # A / B as a cost (row 1a's orientation), or with `rate` B / A (rows 2's and 3a's, where higher is better).
    count_row() {  # count_row TITLE UNIT A_LABEL A_SERIES B_LABEL B_SERIES GOAL cost|rate
        python3 - "$WORK" "$N9" "$@" <<'PY' | tee -a "$WORK/table"
import sys
work, n, title, unit, la, sa, lb, sb, goal, orientation = sys.argv[1:]
def per_item(series):
    with open(f"{work}/v.{series}") as f:
        small, large = (int(x) for x in f.read().split())
    return (large - small) / int(n)
a, b = per_item(sa), per_item(sb)
ratio = f"{a / b:.2f}x" if orientation == "cost" else f"{b / a:.2f}x ({lb} / {la}, as a rate)"
print(f"{title}: {la} {a:,.0f} {unit} | {lb} {b:,.0f} | ratio {ratio} (goal {goal}) [callgrind]")
PY
    }
    # valgrind 3.19 cannot read the DWARF 5 debug information Swift 6 writes: it runs a copy without it (the
    # symbols stay, for callgrind_annotate on the kept .cg files).
    COUNTED_BIN="$WORK/apns-bulk.nodebug"
    PYTHON=$(python3 -c 'import sys; print(sys.executable)')   # the interpreter itself, not a shim that runs it
    strip --strip-debug -o "$COUNTED_BIN" "$BIN"
    for n in "$N9" "$((2 * N9))"; do
        same_token "$n" "$WORK/same9-$n.ndjson"
        python3 scripts/gen-campaign.py --records "$n" --out "$WORK/distinct9-$n.ndjson"
    done

    # 9a: send and h2load -> nghttpd (row 1's set-up; nghttpd runs natively on the server core)
    start_nghttpd "$WORK/nghttpd9.log"
    for n in "$N9" "$((2 * N9))"; do
        counted send9 "$COUNTED_BIN" send "$WORK/same9-$n.ndjson" --results "$WORK/send9-$n.results" \
            --endpoint "https://127.0.0.1:$NG_PORT" --ca-file "$WORK/cert.pem" "${AUTH[@]}" --topic "$TOPIC" \
            --connections "$CONNECTIONS" --progress none --allow-duplicates --overwrite
        [ "$(grep -c '"outcome":"delivered"' "$WORK/send9-$n.results")" -eq "$n" ] \
            || fail "send under callgrind did not deliver all $n records"
        counted h2load9 h2load -n "$n" -c "$CONNECTIONS" -m "$STREAMS" -t 1 -d "$WORK/payload.json" \
            "${H2HEADERS[@]}" "https://127.0.0.1:$NG_PORT/3/device/$TOKEN"
        grep -Eq "^status codes: $n 2xx" "$WORK/h2load9.out" || fail "h2load under callgrind: not $n 2xx"
    done
    kill "$NG_PID"
    count_row "9a send -> nghttpd, instructions per request" instructions send send9 h2load h2load9 \
        "none; 1a's <= 1.5x, read in instructions" cost

    # 9b: the mock and nghttpd under callgrind, each driven by h2load (row 3's set-up)
    for _ in 1 2; do
        rm -f "$WORK/mock9.port"
        counted_server mock9 file "$COUNTED_BIN" mock --listen 127.0.0.1:0 --port-file "$WORK/mock9.port" \
            --write-ca "$WORK/mock9.ca.pem" --key-id TEST123456 --team-id TEAMID1234 --public-key "$PUB" --topic "$TOPIC"
        port=$(free_port)
        counted_server nghttpd9 "$port" nghttpd -a 127.0.0.1 -d "$WORK/htdocs" "$port" "$WORK/key.pem" "$WORK/cert.pem"
    done
    count_row "9b mock vs nghttpd under h2load, server instructions per request" instructions mock mock9 \
        nghttpd nghttpd9 "none; a stand-in for 3a" rate

    # 9c: validate and the Python loop, per distinct record (row 2's set-up)
    for n in "$N9" "$((2 * N9))"; do
        counted validate9 "$COUNTED_BIN" validate "$WORK/distinct9-$n.ndjson" --topic "$TOPIC"
        counted python9 "$PYTHON" -c 'import json, sys
for line in open(sys.argv[1], "rb"):
    json.loads(line)' "$WORK/distinct9-$n.ndjson"
    done
    count_row "9c validate vs python json.loads, instructions per record" instructions validate validate9 \
        python python9 "none; row 2 in time runs above it: Python runs fewer instructions a cycle" rate
fi

echo "== summary ($(date -u '+%H:%M UTC'), load at the end:$(uptime | sed 's/.*load average://'))"
cat "$WORK/table"
