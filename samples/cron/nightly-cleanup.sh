#!/usr/bin/env bash
# Nightly token clean-up: turn yesterday's result files into a prune list for the token database.
# Exit status is prune's: 0 when the list was written. Logs go to stderr (cron mails them on failure).
set -euo pipefail

RESULTS_DIR=${RESULTS_DIR:-/var/lib/apns-bulk/results}
OUT_DIR=${OUT_DIR:-/var/lib/apns-bulk/prune}
day=$(date -u -d yesterday +%F)
mkdir -p "$OUT_DIR"

shopt -s nullglob
files=("$RESULTS_DIR"/"$day"*.ndjson)
if [ ${#files[@]} -eq 0 ]; then
    echo "nightly-cleanup: no result files for $day" >&2
    exit 0
fi

apns-bulk prune "${files[@]}" --format csv --output "$OUT_DIR/prune-$day.csv"
# Feed it to your database, for example:
#   psql "$DATABASE_URL" -c "\copy dead_tokens(token, reason, apns_timestamp_ms) from '$OUT_DIR/prune-$day.csv' csv header"
# then delete tokens whose registration time is older than apns_timestamp_ms (a token registered after that
# moment is still good).

# Re-send yesterday's retryable failures once, with the same credentials as the campaign (env APNS_*).
apns-bulk replay "${files[@]}" --results "$RESULTS_DIR/$day-replay.ndjson" --exclude-in-doubt \
    --progress log || status=$?
case "${status:-0}" in
    0|2|3) ;;                        # finished (3: some records still retryable; tomorrow's run takes them)
    *) exit "${status}" ;;
esac
