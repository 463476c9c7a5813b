-- Row versions from PostgreSQL's own `xmin`: no version trigger, no `version` column needed.
--
-- Every row version already carries the id of the transaction that wrote it (`xmin`), and every
-- write, by anyone, gives the row a new one. Live handles now read it as the row's version and
-- write `… WHERE id = $1 AND xmin = $2`, so the BEFORE UPDATE row trigger that bumped `version`
-- (one PL/pgSQL call per updated row) goes, and so does the need for a `version` column.
-- Tables keep theirs, if they have one; nothing maintains it any more.
--
-- Announcements name the writing transaction once per notification instead of a version per
-- key — {"table": …, "op": …, "version": <xid>, "at": …, "keys": […]}. Only a transaction's
-- first announcing statement names it: once a second one ran (a trigger updating a row the
-- first one changed, say), a row's xmin no longer tells which of the transaction's statements
-- left it as it is, so the later ones say "version": 0 — never a row's version: read it.
-- An UPDATE compares its rows' keys before and after as arrays, and only when they differ looks
-- for keys that are gone (announced as deletes, on the table the statement named, partitions
-- included).
--
-- A partitioned table's partitions get the triggers too, announcing as the partitioned table:
-- a statement may name a partition. Run live.enable_change_notifications again on the
-- partitioned table after adding partitions. (A `RESET ALL` inside a transaction forgets that
-- it already announced: its next statement names the transaction again.)
--
-- Upgrade order: run processes of this version first (they work with 0004's announcements,
-- reading a little more), then apply this migration. Processes of older versions read `version`
-- and would no longer see other writers' changes in their conflict check. Needs PostgreSQL 13.

-- migrate:up
-- The notifications announcing `keys` (JSON texts, the longest `longest` bytes), each at most
-- ~7,000 bytes of keys, under PostgreSQL's 8,000-byte limit; each still to be closed with "}".
CREATE FUNCTION live.announcement_parts(target text, op text, version text, at text, keys text[], longest integer)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    per integer := greatest(1, 7000 / (coalesce(longest, 0) + 1));  -- keys per notification
    parts text[] := '{}';
BEGIN
    FOR part IN 0..(coalesce(cardinality(keys), 0) + per - 1) / per - 1 LOOP
        parts := parts || ('{"table":' || target || ',"op":"' || op || '","version":' || version || ',"at":' || at
            || ',"keys":[' || array_to_string(keys[part * per + 1 : part * per + per], ',') || ']');
    END LOOP;
    RETURN parts;
END
$$;

-- The table announcements name: the trigger's argument (a partition's partitioned table), or
-- the trigger's own table.
CREATE FUNCTION live.announced_table(argument text, schema name, name name) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_json(coalesce(argument, schema || '.' || name))::text $$;

CREATE OR REPLACE FUNCTION live.announce_statement() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    first boolean := coalesce(current_setting('live.announced', true), '') = '';
    target text := live.announced_table(TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME);
    at text := ((extract(epoch FROM clock_timestamp()) * 1000000)::bigint)::text;
    version text;
    keys text[];
    longest integer;
    gone text[];
    longestGone integer;
    payloads text[];
BEGIN
    SELECT array_agg(key), max(octet_length(key)) INTO keys, longest
    FROM (SELECT to_json(id)::text AS key FROM live_rows_after) changed;
    IF keys IS NULL THEN
        RETURN NULL;  -- no row changed
    END IF;
    PERFORM set_config('live.announced', 'yes', true);
    version := CASE WHEN first THEN pg_current_xact_id()::xid::text ELSE '0' END;
    -- An UPDATE that changed a key: the old one is gone. Rarely so: compare the keys first.
    -- (Nested, so that only an UPDATE's trigger plans a query naming its OLD TABLE.)
    IF TG_OP = 'UPDATE' THEN
        IF (SELECT array_agg(id) FROM live_rows_before) IS DISTINCT FROM (SELECT array_agg(id) FROM live_rows_after) THEN
            SELECT array_agg(key), max(octet_length(key)) INTO gone, longestGone FROM (
                SELECT to_json(id)::text AS key FROM live_rows_before b WHERE NOT EXISTS (SELECT FROM live_rows_after a WHERE a.id = b.id)
            ) removed;
        END IF;
    END IF;
    -- All parts but the last say "more", so that listeners take one statement as one batch.
    payloads := live.announcement_parts(target, lower(TG_OP), version, at, keys, longest)
        || live.announcement_parts(target, 'delete', version, at, gone, longestGone);
    FOR i IN 1..cardinality(payloads) LOOP
        PERFORM pg_notify('live_changes', payloads[i] || CASE WHEN i < cardinality(payloads) THEN ',"more":true}' ELSE '}' END);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION live.announce_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('live_changes', '{"table":' || live.announced_table(TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME) || ',"op":"truncate"}');
    RETURN NULL;
END
$$;

-- On `target` and, if it is partitioned, on every partition below it, each naming `target`.
CREATE OR REPLACE FUNCTION live.enable_change_notifications(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    announced text := (SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = target);
    member regclass;
BEGIN
    -- The table first: dropping its row trigger drops the copies on its partitions.
    FOR member IN SELECT target UNION ALL (SELECT relid FROM pg_partition_tree(target) WHERE relid <> target ORDER BY level) LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS live_bump_version ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_notify_change ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_insert ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_insert AFTER INSERT ON %s
                        REFERENCING NEW TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement(%L)', member, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_update ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_update AFTER UPDATE ON %s
                        REFERENCING OLD TABLE AS live_rows_before NEW TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement(%L)', member, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_delete ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_delete AFTER DELETE ON %s
                        REFERENCING OLD TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION live.announce_statement(%L)', member, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_truncate ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_truncate AFTER TRUNCATE ON %s
                        FOR EACH STATEMENT EXECUTE FUNCTION live.announce_truncate(%L)', member, announced);
    END LOOP;
END
$$;

-- Tables announced so far (not their partitions: those follow their partitioned table).
SELECT live.enable_change_notifications(t.tgrelid::regclass) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE t.tgname = 'live_announce_update' AND NOT c.relispartition;

-- migrate:down
-- Back to 0004: a version trigger and per-key versions, and no triggers on partitions. Every
-- announced table needs its `version bigint` column again; one without it stops the rollback,
-- naming the table.
DO $$
DECLARE
    target regclass;
    partition boolean;
BEGIN
    FOR target, partition IN SELECT t.tgrelid::regclass, c.relispartition FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                             WHERE t.tgname = 'live_announce_update' LOOP
        IF partition THEN
            EXECUTE format('DROP TRIGGER live_announce_insert ON %s', target);
            EXECUTE format('DROP TRIGGER live_announce_update ON %s', target);
            EXECUTE format('DROP TRIGGER live_announce_delete ON %s', target);
            EXECUTE format('DROP TRIGGER live_announce_truncate ON %s', target);
        ELSIF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = target AND attname = 'version' AND NOT attisdropped) THEN
            RAISE EXCEPTION 'table % has no version column: add "version bigint NOT NULL DEFAULT 1" before rolling back', target;
        END IF;
    END LOOP;
END
$$;
DROP FUNCTION live.announcement_parts(text, text, text, text, text[], integer);

CREATE OR REPLACE FUNCTION live.announce_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('live_changes', '{"table":' || to_json(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME)::text || ',"op":"truncate"}');
    RETURN NULL;
END
$$;

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
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(op), array_agg(key), array_agg(version), greatest(1, 7000 / (max(length(key)) + max(length(version)) + 2))
        INTO ops, keys, versions, per FROM (
            SELECT 'update' AS op, to_json(id)::text AS key, version::text AS version FROM live_rows_after
            UNION ALL
            SELECT 'delete', to_json(id)::text, version::text FROM live_rows_before b
            WHERE NOT EXISTS (SELECT FROM live_rows_after a WHERE a.id = b.id)
        ) changed;
    ELSE
        SELECT array_agg(lower(TG_OP)), array_agg(key), array_agg(version), greatest(1, 7000 / (max(length(key)) + max(length(version)) + 2))
        INTO ops, keys, versions, per FROM (SELECT to_json(id)::text AS key, version::text AS version FROM live_rows_after) changed;
    END IF;
    IF keys IS NULL THEN
        RETURN NULL;
    END IF;
    IF cardinality(keys) <= 200 AND ops[1] = ops[cardinality(ops)] THEN
        payload := '{"table":' || target || ',"op":"' || ops[1] || '","keys":[' || array_to_string(keys, ',')
            || '],"versions":[' || array_to_string(versions, ',') || '],"at":' || at || '}';
        IF octet_length(payload) < 8000 THEN
            PERFORM pg_notify('live_changes', payload);
            RETURN NULL;
        END IF;
    END IF;
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

SELECT live.enable_change_notifications(tgrelid::regclass) FROM pg_trigger WHERE tgname = 'live_announce_update';
DROP FUNCTION live.announced_table(text, name, name);
