#!/usr/bin/env bash
# Builds the container image from the repository's Containerfile and runs it against the mock, all on this machine
# (no image registry needed):
#   1. installs podman, runc, debootstrap and python3 when missing (Debian 12; run as root: rootful podman);
#   2. builds the static binary (scripts/static-build.sh; --skip-build reuses .build-static);
#   3. makes the runtime base: `debootstrap --variant=minbase bookworm` with the Debian packages that hold what `ldd`
#      lists for the binary (libc6, libgcc-s1, libstdc++6, libssl3, libnghttp2-14) and ca-certificates, imported
#      with `podman import` as localhost/apns-bulk-base:bookworm. The root filesystem is kept as a tar in
#      .build-container/ and reused while the package list is the same (--rebuild-base makes it again);
#   4. `podman build --target prebuilt --build-arg RUNTIME_IMAGE=localhost/apns-bulk-base:bookworm` from the
#      Containerfile, with the binary from step 2 (no Swift image is pulled: the builder stage is skipped);
#   5. checks the image: user 10001, `--version` is the binary's, `ldd` finds every library, no libswift* anywhere;
#   6. starts the mock (the same binary, on the host) on 127.0.0.1, an ephemeral port, and runs the image as uid
#      10001 with a read-only root filesystem (no tmpfs either) and the host's network, configured by environment
#      like samples/k8s/indexed-job.yaml: samples/campaign.ndjson, the key and the mock's CA mounted read-only, a
#      results folder writable. It expects exit status 2 (the sample's invalid records), one result line per record
#      (delivered 8, prune 3, input_error 5, duplicate 1), the summary's counts, the mock's counters (11 requests,
#      8 answered 200), and files owned by uid 10001; then runs the same command again: status 2, nothing sent.
# podman runs with --runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024: crun fails on these machines'
# cgroup setup, and raising limits is refused. Rootful podman with the host's network needs neither uidmap,
# slirp4netns nor fuse-overlayfs (the kernel's overlay driver serves).
# Usage: scripts/container-test.sh [--skip-build] [--rebuild-base]    (DEBIAN_MIRROR overrides deb.debian.org)
# Slow: the static build (several minutes on 2 cores) and, on the first run, debootstrap (1-3 minutes); the
# container steps take seconds. Not part of scripts/test.sh. Leaves its files in .build-container/run/.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_build=false
rebuild_base=false
for arg in "$@"; do
    case "$arg" in
        --skip-build) skip_build=true ;;
        --rebuild-base) rebuild_base=true ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "container-test: unknown argument $arg" >&2; exit 64 ;;
    esac
done

fail() { echo "container-test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "run as root (rootful podman and debootstrap)"

SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
BASE_IMAGE=localhost/apns-bulk-base:$SUITE
IMAGE=localhost/apns-bulk:container-test
CACHE="$PWD/.build-container"
RUN="$CACHE/run"
PODMAN=(podman --runtime runc)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
# The sample key and ids (samples/keys/README.md), the demo's topic.
KEY_ID=TEST123456
TEAM_ID=TEAMID1234
TOPIC=com.example.app

started=$EPOCHREALTIME
step_started=$started
timings=()
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
step() { echo; echo "== $*"; step_name="$*"; step_started=$EPOCHREALTIME; }
step_done() {
    local took
    took=$(elapsed "$step_started" "$EPOCHREALTIME")
    timings+=("$(printf '%7ss  %s' "$took" "$step_name")")
    echo "container-test: $step_name: ${took}s"
}

mock_pid=
container="apns-bulk-container-test-$$"
cleanup() {
    if [ -n "$mock_pid" ] && kill -0 "$mock_pid" 2>/dev/null; then
        kill -TERM "$mock_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$mock_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$mock_pid" 2>/dev/null || true
    fi
    if command -v podman >/dev/null; then
        podman rm --force --ignore "$container" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "install what is missing"
need=()
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    echo "container-test: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
podman --version
runc --version | head -n 1
step_done

build_args=()
[ "$skip_build" = false ] || build_args=(--skip-build)
step "static binary: scripts/static-build.sh${build_args[*]:+ ${build_args[*]}}"
bash scripts/static-build.sh "${build_args[@]}"
BINARY_IN_CONTEXT=.build-static/release/apns-bulk   # the Containerfile's default BINARY
BIN="$PWD/$BINARY_IN_CONTEXT"
[ -x "$BIN" ] || fail "$BIN is missing"
step_done

step "runtime base $BASE_IMAGE (debootstrap --variant=minbase $SUITE)"
# The Debian packages that hold each library `ldd` resolves (usrmerge: the path may be listed under /usr or not).
ldd_out="$(ldd "$BIN")"
! grep -q 'not found' <<<"$ldd_out" || fail "ldd: a library is missing on this machine: $ldd_out"
packages=(ca-certificates)
while read -r lib; do
    [ -n "$lib" ] || continue
    owner=
    for path in "$lib" "$(readlink -f "$lib")"; do
        for candidate in "$path" "${path#/usr}" "/usr$path"; do
            owner="$(dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1)" && [ -n "$owner" ] && break 2
        done
    done
    [ -n "$owner" ] || fail "no Debian package holds $lib"
    echo "  $lib: $owner"
    packages+=("$owner")
done < <(awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }' <<<"$ldd_out")
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
include="$(IFS=,; echo "${packages[*]}")"
base_tar="$CACHE/base-$SUITE.tar"
base_stamp="$CACHE/base-$SUITE.stamp"
stamp="suite=$SUITE mirror=$MIRROR variant=minbase include=$include"
mkdir -p "$CACHE"
if [ "$rebuild_base" = false ] && [ -s "$base_tar" ] && [ "$(cat "$base_stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "container-test: reusing $base_tar ($stamp)"
else
    rootfs="$CACHE/rootfs"
    rm -rf "$rootfs" "$base_tar" "$base_stamp"
    echo "container-test: debootstrap --variant=minbase --include=$include $SUITE (log: $CACHE/debootstrap.log)"
    if ! timeout 1800 debootstrap --variant=minbase --include="$include" "$SUITE" "$rootfs" "$MIRROR" \
        >"$CACHE/debootstrap.log" 2>&1; then
        tail -n 20 "$CACHE/debootstrap.log" >&2
        fail "debootstrap failed"
    fi
    # The package files and indexes are not needed in an image (the Containerfile installs nothing on this base).
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/etc/hostname
    tar -C "$rootfs" --numeric-owner -cf "$base_tar" .
    rm -rf "$rootfs"
    echo "$stamp" >"$base_stamp"
fi
# The image is imported again only when the tar changed (the label holds its digest), so podman's build cache holds.
digest="$(sha256sum "$base_tar" | cut -d' ' -f1)"
label=org.apns-bulk.base-sha256
if [ "$(podman image inspect --format "{{index .Labels \"$label\"}}" "$BASE_IMAGE" 2>/dev/null)" = "$digest" ]; then
    echo "container-test: $BASE_IMAGE is already this tar"
else
    podman import --change "LABEL $label=$digest" "$base_tar" "$BASE_IMAGE" >/dev/null
    echo "container-test: imported $base_tar as $BASE_IMAGE"
fi
podman image ls "$BASE_IMAGE"
step_done

step "podman build -f Containerfile --target prebuilt --build-arg RUNTIME_IMAGE=$BASE_IMAGE"
timeout 900 "${PODMAN[@]}" build "${LIMITS[@]}" --pull=never -f Containerfile --target prebuilt \
    --build-arg RUNTIME_IMAGE="$BASE_IMAGE" --build-arg BINARY="$BINARY_IN_CONTEXT" -t "$IMAGE" .
podman image ls "$IMAGE"
step_done

step "the image: user, --version, libraries, no Swift runtime"
run_image=(timeout 120 "${PODMAN[@]}" run --rm --name "$container" "${LIMITS[@]}" --user 10001 --read-only
           --read-only-tmpfs=false --network host)
user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
echo "image user: $user"
[ "$user" = 10001 ] || fail "the image runs as '$user', expected 10001"
version="$("${run_image[@]}" "$IMAGE" --version)"
echo "apns-bulk --version in the image: $version"
[ "$version" = "$("$BIN" --version)" ] || fail "the image's --version ($version) is not the binary's"
inside="$("${run_image[@]}" --entrypoint /bin/sh "$IMAGE" -c \
    'ldd /usr/local/bin/apns-bulk; echo "libswift files:"; find / -xdev -name "libswift*" 2>/dev/null; echo end')"
echo "$inside"
! grep -q 'not found' <<<"$inside" || fail "a library the binary needs is missing in the image"
[ "$(sed -n '/^libswift files:$/,/^end$/p' <<<"$inside" | wc -l)" -eq 2 ] || fail "the image holds a Swift runtime"
step_done

step "the image sends samples/campaign.ndjson to the mock on 127.0.0.1"
rm -rf "$RUN"
mkdir -p "$RUN/mock" "$RUN/results"
chown 10001:10001 "$RUN/results"
"$BIN" mock --listen 127.0.0.1:0 --port-file "$RUN/mock/port" --write-ca "$RUN/mock/mock-ca.pem" \
    --key-id "$KEY_ID" --team-id "$TEAM_ID" --public-key samples/keys/AuthKey_TEST123456.pub.pem --topic "$TOPIC" \
    --counters "$RUN/mock/counters.json" 2>"$RUN/mock/mock.log" &
mock_pid=$!
for _ in $(seq 1 100); do [ -s "$RUN/mock/port" ] && break; sleep 0.1; done
[ -s "$RUN/mock/port" ] || { cat "$RUN/mock/mock.log" >&2; fail "the mock did not start within 10 s"; }
port="$(cat "$RUN/mock/port")"
echo "mock listening on https://127.0.0.1:$port (pid $mock_pid)"
chmod a+r "$RUN/mock/mock-ca.pem"
# As samples/k8s/indexed-job.yaml configures its pod: the campaign under /data, the key under /secrets/apns,
# everything else from the environment.
send=("${run_image[@]}"
      -v "$PWD/samples:/data/campaigns:ro"
      -v "$PWD/samples/keys/AuthKey_TEST123456.p8:/secrets/apns/AuthKey.p8:ro"
      -v "$RUN/mock/mock-ca.pem:/secrets/mock/ca.pem:ro"
      -v "$RUN/results:/data/results"
      -e APNS_KEY_FILE=/secrets/apns/AuthKey.p8 -e APNS_KEY_ID="$KEY_ID" -e APNS_TEAM_ID="$TEAM_ID"
      -e APNS_TOPIC="$TOPIC" -e APNS_ENDPOINT="https://127.0.0.1:$port" -e APNS_CA_FILE=/secrets/mock/ca.pem
      "$IMAGE" send /data/campaigns/campaign.ndjson --results /data/results/results.ndjson
      --summary /data/results/summary.json --progress log)
status=0
"${send[@]}" 2>"$RUN/send.log" || status=$?
cat "$RUN/send.log"
echo "container-test: send in the image exited $status (2: finished, some records invalid, as the sample intends)"
[ "$status" -eq 2 ] || fail "send in the image exited $status, expected 2"
again=0
"${send[@]}" 2>"$RUN/send-again.log" || again=$?
echo "container-test: the same command again exited $again: $(head -n 1 "$RUN/send-again.log")"
[ "$again" -eq 2 ] || { cat "$RUN/send-again.log" >&2; fail "the second run exited $again, expected 2"; }
grep -q 'nothing sent' "$RUN/send-again.log" || { cat "$RUN/send-again.log" >&2; fail "the second run sent again"; }
kill -TERM "$mock_pid"
for _ in $(seq 1 100); do kill -0 "$mock_pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$mock_pid" 2>/dev/null || fail "the mock did not stop within 10 s of SIGTERM"
wait "$mock_pid" || true
mock_pid=
step_done

step "check the result file, the summary and the mock's counters"
python3 - "$RUN" <<'PY'
import collections, json, os, sys

run = sys.argv[1]
def fail(message):
    sys.exit(f"container-test: FAIL: {message}")

results = os.path.join(run, "results", "results.ndjson")
with open(results, encoding="utf-8") as f:
    lines = [json.loads(line) for line in f]
outcomes = collections.Counter(line["outcome"] for line in lines)
print(f"results.ndjson: {len(lines)} lines, lines {sorted(line['line'] for line in lines)}")
print("outcomes:", dict(sorted(outcomes.items())))
if sorted(line["line"] for line in lines) != list(range(1, 18)):
    fail("expected one result line for each of the 17 records")
expected = {"delivered": 8, "prune": 3, "input_error": 5, "duplicate": 1}
if outcomes != expected:
    fail(f"outcomes {dict(outcomes)}, expected {expected}")
for path in (results, os.path.join(run, "results", "summary.json")):
    if os.stat(path).st_uid != 10001:
        fail(f"{path} is owned by uid {os.stat(path).st_uid}, not 10001")

with open(os.path.join(run, "results", "summary.json"), encoding="utf-8") as f:
    summary = json.load(f)
counts = {k: v for k, v in summary["outcomes"].items() if v}
print("summary.json outcomes:", dict(sorted(counts.items())))
if counts != expected:
    fail(f"the summary's outcomes {counts}, expected {expected}")

with open(os.path.join(run, "mock", "counters.json"), encoding="utf-8") as f:
    counters = json.load(f)
print(f"mock counters: requests {counters['requests']}, by status {counters['by_status']}")
if counters["requests"] != 11 or counters["by_status"].get("200") != 8:
    fail("the mock expected 11 requests, 8 answered 200 (invalid records and the duplicate are never sent, "
         "and the second run sends nothing)")
PY
step_done

echo
echo "container-test: timings"
printf '%s\n' "${timings[@]}"
printf '%7ss  total\n' "$(elapsed "$started" "$EPOCHREALTIME")"
echo "container-test: OK: $IMAGE (from Containerfile, on $BASE_IMAGE) sent the sample campaign to the mock as uid 10001 on a read-only root filesystem"
