#!/usr/bin/env bash
# Nightly token clean-up: turn yesterday's result files into a prune list for the token database, then send
# yesterday's retryable failures once more.
#
# Safe to run again: twice on one day, or after a crash or kill -9 in the middle. The prune list is written anew
# from the same files; the replay's result file records which result files it replays, so the same replay run
# again sends nothing once it has finished and continues where it stopped if it had not. Replays go to their own
# folder, so they never match the campaign files' pattern.
#
# Settings come from $APNS_BULK_ENV (default /etc/apns-bulk/env, see env.example), exported here, so cron needs
# no `. file` of its own. Exit status: 0 when the list was written and the replay finished (its own status 2 or
# 3 included: what is still retryable is in the replay's results); anything else is an error worth a look (cron
# mails the log).
set -euo pipefail

env_file=${APNS_BULK_ENV:-/etc/apns-bulk/env}
if [ -r "$env_file" ]; then
    set -a
    # shellcheck source=/dev/null
    . "$env_file"
    set +a
fi

RESULTS_DIR=${RESULTS_DIR:-/var/lib/apns-bulk/results}
OUT_DIR=${OUT_DIR:-/var/lib/apns-bulk/prune}
REPLAY_DIR=${REPLAY_DIR:-$RESULTS_DIR/replays}
day=${DAY:-$(date -u -d yesterday +%F)}
mkdir -p "$OUT_DIR" "$REPLAY_DIR"
log() { echo "$(date -u +%FT%TZ) nightly-cleanup: $*" >&2; }

shopt -s nullglob
files=("$RESULTS_DIR"/"$day"*.ndjson)
if [ ${#files[@]} -eq 0 ]; then
    log "no result files for $day"
    exit 0
fi

apns-bulk prune "${files[@]}" --format csv --output "$OUT_DIR/prune-$day.csv"
log "prune list: $OUT_DIR/prune-$day.csv"
# Delete the dead tokens from the token database, with the SQL beside this script (read its header first: it names
# the table it expects). Set DATABASE_URL for PostgreSQL or SQLITE_DB for SQLite, and SOFT_DELETE=on to mark rows
# deleted instead. Only rows of the CSV's topic and environment, last registered before APNs's 410 timestamp, go.
# Campaigns sent with --keep add their kept columns to the CSV: for PostgreSQL name them in KEPT_COLUMNS
# (e.g. "user_id text, device_id text", in the CSV's order); SQLite loads them by the CSV's header.
sql_dir=${CLEANUP_SQL_DIR:-$(dirname "$0")}
if [ -n "${DATABASE_URL:-}" ]; then
    psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -v soft_delete="${SOFT_DELETE:-off}" \
        ${KEPT_COLUMNS:+-v "kept_columns=$KEPT_COLUMNS"} -f "$sql_dir/cleanup-postgresql.sql" < "$OUT_DIR/prune-$day.csv"
    log "dead tokens removed from PostgreSQL"
elif [ -n "${SQLITE_DB:-}" ]; then
    soft=0
    [ "${SOFT_DELETE:-off}" != on ] || soft=1
    sqlite3 -bail -cmd "create temp table cleanup_settings as select $soft as soft_delete" "$SQLITE_DB" \
        ".read $sql_dir/cleanup-sqlite.sql" < "$OUT_DIR/prune-$day.csv"
    log "dead tokens removed from $SQLITE_DB"
fi

# Re-send yesterday's retryable failures once, with the same credentials as the campaign (env APNS_*). In-doubt
# records are left out: they may have arrived already.
status=0
apns-bulk replay "${files[@]}" --results "$REPLAY_DIR/$day.ndjson" --exclude-in-doubt --progress log || status=$?
case "$status" in
    0|2|3|6) log "replay of $day finished (status $status): $REPLAY_DIR/$day.ndjson" ;;
    *) log "replay of $day failed (status $status)"; exit "$status" ;;
esac
