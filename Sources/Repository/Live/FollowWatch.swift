/// The tables a repository holds live values of, checked now and then against what its change
/// source announces: a table whose triggers were dropped (``LiveSchema/disable(_:on:)``) or that
/// left the publication stops announcing its changes without a word, and its live values would
/// silently stop following. Plain state, kept under the repository's lock.
struct FollowWatch {
    /// How often the tables are checked.
    var interval: Duration = .seconds(30)
    /// The tables checked, as `regclass` reads them.
    private(set) var tables: Set<String> = []
    /// Those found not announced at the last check, as announcements name them.
    private var silent: Set<String> = []
    /// Whether the checking task was started.
    private(set) var isRunning = false
    /// The checking task, cancelled when the repository closes.
    var task: Task<Void, Never>?

    /// Adds `table` to those checked; true when the checking task must start.
    mutating func watch(_ table: String) -> Bool {
        tables.insert(table)
        defer { isRunning = true }
        return !isRunning
    }

    /// A check found these tables, each with why its changes are not announced (nil: they are).
    /// The tables that stopped being announced since the last check, and whether some came
    /// back — whose live values then missed what changed meanwhile.
    mutating func checked(_ found: [FollowedTables.Checked]) -> (stopped: [FollowedTables.Checked], resumed: Bool) {
        let now = Set(found.filter { $0.gap != nil }.map(\.name))
        defer { silent = now }
        return (found.filter { $0.gap != nil && !silent.contains($0.name) }, !silent.subtracting(now).isEmpty)
    }
}

extension LiveRepository {
    /// Checks `table` (a name `regclass` reads) from now on, every ``FollowWatch/interval``: see
    /// ``FollowWatch``.
    func watchFollowed(_ table: String) {
        guard followed.withLock({ $0.watch(table) }) else { return }
        let task = Task { [weak self] in
            while let interval = self?.followed.withLock({ $0.interval }) {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled, !feed.isStopped else { return }
                await checkFollowed()
            }
        }
        followed.withLock { $0.task = task }
    }

    /// One check (see ``FollowWatch``): a table no longer announced is reported on ``errors``
    /// with the remedy, once; when it is announced again, everything live is read again.
    private func checkFollowed() async {
        let tables = followed.withLock { Array($0.tables) }
        var found: [FollowedTables.Checked] = []
        if let all = try? await FollowedTables.check(tables, source: feed.source, on: database) {
            found = all
        } else {
            // A table dropped since fails the check of all: each on its own then. A check that
            // still fails (the server unreachable) says nothing; the next one may.
            for table in tables {
                do {
                    found += try await FollowedTables.check([table], source: feed.source, on: database)
                } catch let error as PostgresError where error.sqlState == PostgresError.Code.undefinedTable {
                    // Named as a check names the table (schema.name), so that one made again is seen to be back.
                    let parts = SQLIdentifier.unquotedParts(of: table)
                    let shown = parts.count == 2 ? SQLIdentifier.shown(schema: parts[0], name: parts[1]) : TerminalText.name(table, limit: 200)
                    found.append((parts.joined(separator: "."), shown, .dropped))
                } catch {}
            }
            guard !found.isEmpty else { return }
        }
        let (stopped, resumed) = followed.withLock { $0.checked(found) }
        for table in stopped {
            report(.refreshFailed(table: table.shown, PostgresError(.invalidStatement,
                "changes of this table no longer reach this repository, and its live values do not follow them: " + FollowedTables.remedy([table], source: feed.source))))
        }
        if resumed {
            logger.info("changes of a live table reach this repository again; live values re-read")
            resyncEverything()
        }
    }
}
