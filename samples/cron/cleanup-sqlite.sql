-- The nightly clean-up's delete, for SQLite: reads `apns-bulk prune --format csv` on standard input and deletes
-- (or, with soft_delete set to 1 below, marks deleted) only the device tokens APNs confirmed dead:
--
--   sqlite3 -bail tokens.db ".read cleanup-sqlite.sql" < prune.csv
--   sqlite3 -bail -cmd "create temp table cleanup_settings as select 1 as soft_delete" tokens.db \
--       ".read cleanup-sqlite.sql" < prune.csv
--
-- The token table it expects (rename to yours; registered_at_ms is when your app last registered the token, in
-- milliseconds since the epoch, the unit of the CSV's timestamp):
--
--   CREATE TABLE device_tokens (token TEXT, topic TEXT, environment TEXT, registered_at_ms INTEGER,
--                               deleted_at_ms INTEGER);
--
-- The rule is cleanup-postgresql.sql's: the normalised token (lowercase hex, without `<`, `>` and spaces), the
-- topic and the environment must match; a 410 deletes a row last registered before its timestamp, compared as
-- milliseconds (a row registered at or after it, or with no registration time, stays); BadDeviceToken and
-- DeviceTokenNotForTopic, whose timestamp is empty on purpose, delete the row whatever its registration time; an
-- empty timestamp with any other reason deletes nothing. One transaction: a CSV that does not load deletes nothing.
-- The table of prune rows is made from the CSV's header, so the columns a campaign sent with `--keep` adds after
-- `results` are loaded too, under their names: a delete of your own can join on them (p.device_id).
CREATE TEMP TABLE IF NOT EXISTS cleanup_settings AS SELECT 0 AS soft_delete;
BEGIN;
.import --csv --schema temp /dev/stdin prune_rows
CREATE TEMP TABLE dead_rows AS
SELECT d.rowid AS row_id
FROM device_tokens d
JOIN prune_rows p
  ON lower(replace(replace(replace(d.token, '<', ''), '>', ''), ' ', '')) = lower(p.token)
 AND d.topic = p.topic
 AND d.environment = p.environment
WHERE (p.reason IN ('Unregistered', 'ExpiredToken') AND p.timestamp <> ''
       AND d.registered_at_ms < CAST(p.timestamp AS INTEGER))
   OR (p.reason IN ('BadDeviceToken', 'DeviceTokenNotForTopic') AND p.timestamp = '');
UPDATE device_tokens SET deleted_at_ms = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE (SELECT soft_delete FROM cleanup_settings) = 1 AND deleted_at_ms IS NULL
  AND rowid IN (SELECT row_id FROM dead_rows);
DELETE FROM device_tokens
WHERE (SELECT soft_delete FROM cleanup_settings) = 0 AND rowid IN (SELECT row_id FROM dead_rows);
DROP TABLE dead_rows;
DROP TABLE prune_rows;
COMMIT;
