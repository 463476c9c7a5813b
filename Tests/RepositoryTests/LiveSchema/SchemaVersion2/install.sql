-- The live schema as version 2 of the library installed it (its triggers called helper
-- functions for every statement), kept to test the upgrade from it.
CREATE SCHEMA IF NOT EXISTS live;
-- Whoever writes an enabled table runs its triggers, which call the functions here.
GRANT USAGE ON SCHEMA live TO PUBLIC;
CREATE TABLE IF NOT EXISTS live.schema_version (
    version integer NOT NULL,
    installed_at timestamptz NOT NULL DEFAULT now(),
    installed_by text NOT NULL DEFAULT current_user
);
GRANT SELECT ON live.schema_version TO PUBLIC;

-- The notifications announcing `keys` (JSON texts, the longest `longest` bytes), each at
-- most ~7,000 bytes of keys, under PostgreSQL's 8,000-byte limit; each still to be
-- closed with "}".
CREATE OR REPLACE FUNCTION live.announcement_parts(target text, op text, version text, at text, keys text[], longest integer)
RETURNS text[] LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
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

-- The table announcements name: the trigger's argument (a partition's partitioned
-- table), or the trigger's own table.
CREATE OR REPLACE FUNCTION live.announced_table(argument text, schema name, name name) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$ SELECT to_json(coalesce(argument, schema || '.' || name))::text $$;

-- The SQL expression of a table's key as a JSON text: `to_json(k)::text` for one
-- column, `json_build_array(a, b)::text` for several. Refuses a table without a
-- primary key, and key types announcements cannot carry.
CREATE OR REPLACE FUNCTION live.key_expression(target regclass) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    columns text[];
    bad text;
BEGIN
    SELECT array_agg(quote_ident(a.attname) ORDER BY k.position),
           string_agg(CASE WHEN a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'text'::regtype,
                                               'varchar'::regtype, 'bpchar'::regtype, 'uuid'::regtype)
                           THEN NULL ELSE quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod) END, ', ')
    INTO columns, bad
    FROM pg_index i
    CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
    WHERE i.indrelid = target AND i.indisprimary;
    IF columns IS NULL THEN
        RAISE EXCEPTION 'live: table % has no primary key; live rows are found by their primary key', target
            USING ERRCODE = 'invalid_table_definition', HINT = 'ALTER TABLE ... ADD PRIMARY KEY (...)';
    END IF;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'live: the primary key of % has a column of a type announcements cannot carry: % (use integers, text or uuid)', target, bad
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF cardinality(columns) = 1 THEN
        RETURN 'to_json(' || columns[1] || ')::text';
    END IF;
    RETURN 'json_build_array(' || array_to_string(columns, ', ') || ')::text';
END
$$;

-- The trigger function announcing the changes of tables whose key is `keyexpr`
-- (live.key_expression): one per key shape, made here with the key inlined, so that
-- PL/pgSQL plans its statements once per table and session rather than on every
-- statement. Its argument is the table to name. Made again on every enable, so an
-- upgrade of the library updates it. A key column named as one of its variables
-- (`version`, `target`, `keys`…) is the column where the two meet: use_column.
CREATE OR REPLACE FUNCTION live.announcement_function(keyexpr text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    name text := 'announce_' || substr(md5(keyexpr), 1, 16);
BEGIN
    EXECUTE format($template$
        CREATE OR REPLACE FUNCTION live.%1$I() RETURNS trigger LANGUAGE plpgsql
        SET search_path = pg_catalog, pg_temp AS $body$
        #variable_conflict use_column
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
            SELECT array_agg(k), max(octet_length(k)) INTO keys, longest FROM (SELECT %2$s AS k FROM live_rows_after) changed;
            IF keys IS NULL THEN
                RETURN NULL;  -- no row changed
            END IF;
            IF longest > 7000 THEN
                RAISE EXCEPTION 'live: a key of %% is %% bytes as JSON; change announcements carry keys of at most 7,000', target, longest
                    USING ERRCODE = 'program_limit_exceeded';
            END IF;
            PERFORM set_config('live.announced', 'yes', true);
            version := CASE WHEN first THEN pg_current_xact_id()::xid::text ELSE '0' END;
            -- An UPDATE that changed a key: the old one is gone. Rarely so: compare the keys
            -- first. (Nested, so that only an UPDATE's trigger plans a query naming its OLD TABLE.)
            IF TG_OP = 'UPDATE' THEN
                IF (SELECT array_agg(%2$s) FROM live_rows_before) IS DISTINCT FROM (SELECT array_agg(%2$s) FROM live_rows_after) THEN
                    SELECT array_agg(k), max(octet_length(k)) INTO gone, longestGone
                    FROM (SELECT %2$s AS k FROM live_rows_before EXCEPT SELECT %2$s FROM live_rows_after) removed;
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
        $body$
        $template$, name, keyexpr);
    RETURN 'live.' || quote_ident(name);
END
$$;

CREATE OR REPLACE FUNCTION live.announce_truncate() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pg_notify('live_changes', '{"table":' || live.announced_table(TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME) || ',"op":"truncate"}');
    RETURN NULL;
END
$$;

-- Announces every change of `target` and, if it is partitioned, of every partition below
-- it, each naming `target`. Run it again after adding partitions. Idempotent.
CREATE OR REPLACE FUNCTION live.enable_change_notifications(target regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    announced text := (SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = target);
    announce text;
    member regclass;
BEGIN
    -- Enables (and installs) one at a time: the functions they make are shared.
    PERFORM pg_advisory_xact_lock(x'6C69766500000001'::bigint);
    announce := live.announcement_function(live.key_expression(target));
    -- The table first: dropping its row trigger drops the copies on its partitions.
    FOR member IN SELECT target UNION ALL (SELECT relid FROM pg_partition_tree(target) WHERE relid <> target ORDER BY level) LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS live_bump_version ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_notify_change ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_insert ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_insert AFTER INSERT ON %s
                        REFERENCING NEW TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION %s(%L)', member, announce, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_update ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_update AFTER UPDATE ON %s
                        REFERENCING OLD TABLE AS live_rows_before NEW TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION %s(%L)', member, announce, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_delete ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_delete AFTER DELETE ON %s
                        REFERENCING OLD TABLE AS live_rows_after
                        FOR EACH STATEMENT EXECUTE FUNCTION %s(%L)', member, announce, announced);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_truncate ON %s', member);
        EXECUTE format('CREATE TRIGGER live_announce_truncate AFTER TRUNCATE ON %s
                        FOR EACH STATEMENT EXECUTE FUNCTION live.announce_truncate(%L)', member, announced);
    END LOOP;
END
$$;

-- Stops announcing `target`'s changes (and its partitions').
CREATE OR REPLACE FUNCTION live.disable_change_notifications(target regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    member regclass;
BEGIN
    FOR member IN SELECT target UNION ALL (SELECT relid FROM pg_partition_tree(target) WHERE relid <> target) LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_insert ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_update ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_delete ON %s', member);
        EXECUTE format('DROP TRIGGER IF EXISTS live_announce_truncate ON %s', member);
    END LOOP;
END
$$;
INSERT INTO live.schema_version (version) VALUES (2);
