-- Change notifications for live handles.
--
-- SELECT live.enable_change_notifications('people') installs, on a table with an `id` key and a
-- `version bigint` column:
--   * a BEFORE UPDATE trigger that increments `version` on every update, whoever makes it, so
--     plain-SQL writers are versioned too;
--   * AFTER INSERT/UPDATE/DELETE triggers that NOTIFY channel `live_changes` with the table,
--     the operation, the key and the version only, never the row: readers re-read the table.

-- migrate:up
CREATE SCHEMA IF NOT EXISTS live;

CREATE OR REPLACE FUNCTION live.bump_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := OLD.version + 1;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION live.notify_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed record;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
    PERFORM pg_notify('live_changes', json_build_object(
        'table', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME,
        'op', lower(TG_OP),
        'key', changed.id,
        'version', changed.version)::text);
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
    EXECUTE format('CREATE TRIGGER live_notify_change AFTER INSERT OR UPDATE OR DELETE ON %s
                    FOR EACH ROW EXECUTE FUNCTION live.notify_change()', target);
END
$$;

-- migrate:down
DROP FUNCTION live.enable_change_notifications(regclass);
DROP FUNCTION live.notify_change() CASCADE;
DROP FUNCTION live.bump_version() CASCADE;
DROP SCHEMA live;
