extension LiveSchema {
    /// What every function of the `live` schema sets (`pg_proc.proconfig`), from version 2 on.
    static let pinnedConfiguration = "search_path=pg_catalog, pg_temp"

    /// Which functions of `pg_proc p` are the library's in the `live` schema (a function of
    /// yours there is left as it is).
    static let libraryFunctions = #"(p.proname LIKE 'announce\_%' OR p.proname = ANY (ARRAY['announcement_parts', 'announced_table', 'key_expression', "#
        + #"'announcement_function', 'enable_change_notifications', 'disable_change_notifications', 'stream_partition_truncate']))"#

    /// The library's functions in the `live` schema that still run with their caller's `search_path`.
    static let unpinnedQuery = """
        SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = pg_catalog.to_regnamespace('live') AND \(libraryFunctions)
          AND NOT coalesce('\(pinnedConfiguration)' = ANY (p.proconfig), false)
        ORDER BY 1
        """

    /// Brings the announcement function of every table enabled by an earlier version to this
    /// version's text, without touching the tables: their triggers are the same in every
    /// version since 1, so no table is locked and no table's owner is needed. A function that
    /// cannot be made again — its table's key changed since it was enabled, or another role
    /// made it — keeps its text (``pinSQL`` fixes its `search_path` where it can).
    static let remakeSQL = #"""
        DO $remake$
        DECLARE
            target regclass;
            made name;
        BEGIN
            FOR target, made IN SELECT DISTINCT t.tgrelid::regclass, p.proname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
                                WHERE p.pronamespace = 'live'::regnamespace AND p.proname LIKE 'announce\_%' LOOP
                BEGIN
                    IF 'announce_' || substr(md5(live.key_expression(target)), 1, 16) = made THEN
                        PERFORM live.announcement_function(live.key_expression(target));
                    END IF;
                EXCEPTION WHEN OTHERS THEN
                    NULL;  -- the key changed, or the function is another role's
                END;
            END LOOP;
        END
        $remake$
        """#

    /// Fixes the `search_path` of every function of the library's in the `live` schema that this
    /// role owns and that still runs with its caller's; those of other roles stay (``unpinnedFunctions(on:)``).
    static let pinSQL = #"""
        DO $pin$
        DECLARE
            stale regprocedure;
        BEGIN
            FOR stale IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
                         WHERE p.pronamespace = 'live'::regnamespace AND \#(libraryFunctions)
                           AND NOT coalesce('\#(pinnedConfiguration)' = ANY (p.proconfig), false) LOOP
                BEGIN
                    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', stale);
                EXCEPTION WHEN insufficient_privilege THEN
                    NULL;
                END;
            END LOOP;
        END
        $pin$
        """#

    /// The functions of the `live` schema that still run with the `search_path` of whoever
    /// calls them — and so, for a trigger's, of whoever writes (see ``version``): functions
    /// another role made, which ``install(on:)`` run as this role could not bring up to date.
    /// Empty once the schema's owner (or a superuser) has run it.
    public static func unpinnedFunctions(on database: Database) async throws -> [String] {
        try await database.query(unpinnedQuery).map { try $0.decode(String.self, at: 0) }
    }
}
