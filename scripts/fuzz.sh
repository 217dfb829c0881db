#!/usr/bin/env bash
# Fuzzes every parser with libFuzzer for a bounded time: scripts/fuzz.sh [seconds per target, default 60] [--merge]
#
# One target per parser, each a small Swift file in Tests/Fuzz/<name>/ exposing LLVMFuzzerTestOneInput, declared
# in Package.swift only when APNS_BULK_FUZZ=1 and built with -sanitize=fuzzer,address in .build-fuzz (so the
# normal `swift build` never sees them). Each run starts from the seed corpus in Tests/Fuzz/<name>/corpus/ (kept
# in git) and writes the inputs it finds to .build-fuzz/corpus/<name>/ (not in git). A crash, a failed check, a
# memory error, a leak or a hang fails the script; the input that did it is saved as
# .build-fuzz/artifacts/<name>-crash-* and is replayed with `.build-fuzz/debug/Fuzz<name> <file>`.
#
# --merge adds the new inputs that reach new code and are at most 4 KiB to the seed corpus (commit them by hand).
# --replay runs every seed-corpus input once (-runs=0) and explores nothing: deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=60
MERGE=0
REPLAY=0
for argument in "$@"; do
    case "$argument" in
        --merge) MERGE=1 ;;
        --replay) REPLAY=1 ;;
        *[!0-9]* | '') echo "usage: scripts/fuzz.sh [seconds per target] [--merge] [--replay]" >&2; exit 2 ;;
        *) SECONDS_PER_TARGET=$argument ;;
    esac
done

TARGETS=(JSONScanner NDJSONRecord CSVRecord PayloadTemplate ResultLine ProxyResponse MillisecondTime KeptValue KeptFields)
SCRATCH=.build-fuzz
export APNS_BULK_FUZZ=1

for target in "${TARGETS[@]}"; do
    swift build --scratch-path "$SCRATCH" --product "Fuzz$target" -Xswiftc -sanitize=fuzzer,address
done

mkdir -p "$SCRATCH/artifacts"
failed=()
for target in "${TARGETS[@]}"; do
    found="$SCRATCH/corpus/$target"
    mkdir -p "$found"
    if [ "$REPLAY" = 1 ]; then
        echo "fuzz: $target: replaying the seed corpus" >&2
        budget=(-runs=0)
        corpora=("Tests/Fuzz/$target/corpus")
    else
        echo "fuzz: $target for ${SECONDS_PER_TARGET}s" >&2
        budget=(-max_total_time="$SECONDS_PER_TARGET")
        corpora=("$found" "Tests/Fuzz/$target/corpus")
    fi
    if ! "$SCRATCH/debug/Fuzz$target" "${budget[@]}" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$SCRATCH/artifacts/$target-" "${corpora[@]}" \
        >"$SCRATCH/$target.log" 2>&1; then
        tail -n 60 "$SCRATCH/$target.log" >&2
        failed+=("$target")
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$SCRATCH/$target.log")
    if [ -z "$runs" ] || [ "$runs" -eq 0 ]; then
        echo "fuzz: $target did not run libFuzzer:" >&2
        tail -n 20 "$SCRATCH/$target.log" >&2
        failed+=("$target")
        continue
    fi
    echo "fuzz: $target: $runs inputs, $(sed -n 's/^stat::new_units_added: *//p' "$SCRATCH/$target.log") new" >&2
    if [ "$MERGE" = 1 ]; then
        "$SCRATCH/debug/Fuzz$target" -merge=1 -max_len=4096 "Tests/Fuzz/$target/corpus" "$found" \
            >>"$SCRATCH/$target.log" 2>&1
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]} (inputs in $SCRATCH/artifacts/)" >&2
    exit 1
fi
if [ "$REPLAY" = 1 ]; then
    echo "fuzz: ${#TARGETS[@]} targets, every seed input replayed, no crash" >&2
else
    echo "fuzz: ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET}s each, no crash" >&2
fi
