-- The nightly clean-up's delete, for PostgreSQL: reads `apns-bulk prune --format csv` on standard input and
-- deletes (or, with -v soft_delete=on, marks deleted) only the device tokens APNs confirmed dead:
--
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 [-v soft_delete=on] -f cleanup-postgresql.sql < prune.csv
--
-- A prune list of a campaign sent with `--keep user_id,device_id` has those columns after `results`: name them,
-- in the CSV's order, with -v kept_columns='user_id text, device_id text' (they are loaded into prune_rows too, for
-- a join of your own by them; the delete below matches by token, topic and environment alone).
--
-- The token table it expects (rename to yours; registered_at is when your app last registered the token):
--
--   CREATE TABLE device_tokens (token text, topic text, environment text, registered_at timestamptz,
--                               deleted_at timestamptz);
--
-- A row goes only when all of these hold:
-- - its token, normalised (lowercase hex, without `<`, `>` and spaces, so `<A1B2 C3D4 ...>` matches), is the
--   row's token (prune writes lowercase hex);
-- - its topic and environment (production, development, or the host of another endpoint) are the row's: another
--   app's rows and the other environment's rows stay;
-- - for a 410 (Unregistered, ExpiredToken), the token was last registered before APNs's timestamp, compared to the
--   millisecond (the CSV's timestamp is milliseconds since the epoch, not seconds): a token registered again at or
--   after that moment is live and stays, and so does a row with no registration time;
-- - for BadDeviceToken and DeviceTokenNotForTopic, whose timestamp is empty on purpose (the token itself is wrong
--   for that topic and environment whenever it was registered): the row goes, whatever its registration time. An
--   empty timestamp with any other reason deletes nothing.
-- (COPY reads an empty cell as NULL: the comparisons say coalesce(timestamp_ms, '') so an empty timestamp is never
-- compared as a time.) Everything runs in one transaction: a CSV that does not load deletes nothing.
\set ON_ERROR_STOP on
\if :{?soft_delete}
\else
\set soft_delete off
\endif
\if :{?kept_columns}
\set kept_column_list ', ' :kept_columns
\else
\set kept_column_list ''
\endif
BEGIN;
CREATE TEMP TABLE prune_rows (
    token text, reason text, timestamp_ms text, topic text, environment text, timestamp_iso text, campaign text,
    results text :kept_column_list
) ON COMMIT DROP;
\copy prune_rows from pstdin with (format csv, header true)
CREATE TEMP TABLE dead_rows ON COMMIT DROP AS
SELECT d.ctid AS row_id
FROM device_tokens d
JOIN prune_rows p
  ON lower(regexp_replace(d.token, '[<> ]', '', 'g')) = lower(p.token)
 AND d.topic = p.topic
 AND d.environment = p.environment
WHERE (p.reason IN ('Unregistered', 'ExpiredToken') AND coalesce(p.timestamp_ms, '') <> ''
       AND d.registered_at < to_timestamp(p.timestamp_ms::bigint / 1000.0))
   OR (p.reason IN ('BadDeviceToken', 'DeviceTokenNotForTopic') AND coalesce(p.timestamp_ms, '') = '');
UPDATE device_tokens SET deleted_at = now()
WHERE :'soft_delete'::boolean AND deleted_at IS NULL AND ctid IN (SELECT row_id FROM dead_rows);
DELETE FROM device_tokens
WHERE NOT :'soft_delete'::boolean AND ctid IN (SELECT row_id FROM dead_rows);
COMMIT;
