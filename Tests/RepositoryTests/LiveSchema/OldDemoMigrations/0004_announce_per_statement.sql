-- One announcement per statement instead of one per row.
--
-- live.enable_change_notifications('t') now installs statement-level AFTER triggers with
-- transition tables: a statement that changes 5,000 rows sends a few notifications listing
-- their keys and versions, and when the statement ran (µs since 1970, for measuring lag) —
-- {"table": …, "op": …, "keys": […], "versions": […], "at": …} — each under
-- PostgreSQL's 8,000-byte limit; all but the last say "more": true, so that listeners take one
-- statement as one batch. TRUNCATE is announced too ({"table": …, "op": "truncate"}). The
-- BEFORE UPDATE row trigger that bumps `version` stays. Every table that had the per-row
-- announcement is switched over; listeners still understand the per-row payloads.
-- A row key must stay under about 7,000 bytes as JSON.

-- migrate:up
CREATE OR REPLACE FUNCTION live.announce_statement() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    target text := to_json(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME)::text;
    at text := ((extract(epoch FROM clock_timestamp()) * 1000000)::bigint)::text;
    ops text[];
    keys text[];
    versions text[];
    per integer;  -- changed rows per notification
    chunk record;
    payload text;
BEGIN
    -- The changed rows (each branch names only the transition tables its trigger has), and
    -- how many fit one payload of at most ~7,000 bytes.
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(op), array_agg(key), array_agg(version), greatest(1, 7000 / (max(length(key)) + max(length(version)) + 2))
        INTO ops, keys, versions, per FROM (
            SELECT 'update' AS op, to_json(id)::text AS key, version::text AS version FROM live_rows_after
            UNION ALL
            -- An UPDATE that changed a key: the old key is gone.
            SELECT 'delete', to_json(id)::text, version::text FROM live_rows_before b
            WHERE NOT EXISTS (SELECT FROM live_rows_after a WHERE a.id = b.id)
        ) changed;
    ELSE
        SELECT array_agg(lower(TG_OP)), array_agg(key), array_agg(version), greatest(1, 7000 / (max(length(key)) + max(length(version)) + 2))
        INTO ops, keys, versions, per FROM (SELECT to_json(id)::text AS key, version::text AS version FROM live_rows_after) changed;
    END IF;
    IF keys IS NULL THEN
        RETURN NULL;  -- no row changed
    END IF;
    -- Most statements change a few rows, all in one way: one notification, built without a query.
    IF cardinality(keys) <= 200 AND ops[1] = ops[cardinality(ops)] THEN
        payload := '{"table":' || target || ',"op":"' || ops[1] || '","keys":[' || array_to_string(keys, ',')
            || '],"versions":[' || array_to_string(versions, ',') || '],"at":' || at || '}';
        IF octet_length(payload) < 8000 THEN
            PERFORM pg_notify('live_changes', payload);
            RETURN NULL;
        END IF;
    END IF;
    -- Their keys and versions, `per` rows to a notification.
    FOR chunk IN
        SELECT op, string_agg(key, ',') AS keys, string_agg(version, ',') AS versions,
               row_number() OVER (ORDER BY op, part) AS position, count(*) OVER () AS parts
        FROM (SELECT op, key, version, (n - 1) / per AS part
              FROM unnest(ops, keys, versions) WITH ORDINALITY AS changed(op, key, version, n)) numbered
        GROUP BY op, part ORDER BY op, part
    LOOP
        PERFORM pg_notify('live_changes', '{"table":' || target || ',"op":"' || chunk.op || '","keys":[' || chunk.keys
            || '],"versions":[' || chunk.versions || '],"at":' || at
            || CASE WHEN chunk.position < chunk.parts THEN ',"more":true' ELSE '' END || '}');
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION live.announce_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('live_changes', '{"table":' || to_json(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME)::text || ',"op":"truncate"}');
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION live.enable_change_notifications(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS live_bump_version ON %s', target);
    EXECUTE format('CREATE TRIGGER live_bump_version BEFORE UPDATE ON %s
                    FOR EACH ROW EXECUTE FUNCTION live.bump_version()', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_notify_change ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_announce_insert ON %s', target);
    EXECUTE format('CREATE TRIGGER live_announce_insert AFTER INSERT ON %s
                    REFERENCING NEW TABLE AS live_rows_after
                    FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement()', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_announce_update ON %s', target);
    EXECUTE format('CREATE TRIGGER live_announce_update AFTER UPDATE ON %s
                    REFERENCING OLD TABLE AS live_rows_before NEW TABLE AS live_rows_after
                    FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement()', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_announce_delete ON %s', target);
    EXECUTE format('CREATE TRIGGER live_announce_delete AFTER DELETE ON %s
                    REFERENCING OLD TABLE AS live_rows_after
                    FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement()', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_announce_truncate ON %s', target);
    EXECUTE format('CREATE TRIGGER live_announce_truncate AFTER TRUNCATE ON %s
                    FOR EACH STATEMENT EXECUTE FUNCTION live.announce_truncate()', target);
END
$$;

SELECT live.enable_change_notifications(tgrelid::regclass) FROM pg_trigger WHERE tgname = 'live_notify_change';

-- migrate:down
CREATE OR REPLACE FUNCTION live.enable_change_notifications(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS live_bump_version ON %s', target);
    EXECUTE format('CREATE TRIGGER live_bump_version BEFORE UPDATE ON %s
                    FOR EACH ROW EXECUTE FUNCTION live.bump_version()', target);
    EXECUTE format('DROP TRIGGER IF EXISTS live_notify_change ON %s', target);
    EXECUTE format('CREATE TRIGGER live_notify_change AFTER INSERT OR UPDATE OR DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION live.notify_change()', target);
END
$$;

SELECT live.enable_change_notifications(tgrelid::regclass) FROM pg_trigger WHERE tgname = 'live_announce_update';
DO $$
DECLARE
    target regclass;
BEGIN
    FOR target IN SELECT DISTINCT tgrelid::regclass FROM pg_trigger WHERE tgname LIKE 'live_announce_%' LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_insert ON %s', target);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_update ON %s', target);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_delete ON %s', target);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_truncate ON %s', target);
    END LOOP;
END
$$;
DROP FUNCTION live.announce_truncate();
DROP FUNCTION live.announce_statement();
