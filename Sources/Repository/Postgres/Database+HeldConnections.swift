extension Database {
    /// The pooled connections the running task holds in the bodies of ``withConnection(_:)``
    /// and ``transaction(_:)``: a task that holds all of a pool's connections and asks it for
    /// another (`database.query` inside `database.transaction`, say, with one connection)
    /// would wait for itself forever — it is told so instead.
    @TaskLocal static var held = HeldConnections()

    /// Runs `body`, counting `connection`'s checkout as held by the running task.
    func holding<T>(_ body: () async throws -> T) async throws -> T {
        try await Self.$held.withValue(Self.held.adding(self)) { try await body() }
    }

    /// Throws when the running task holds every connection of this pool: a checkout would never end.
    func refuseSelfDeadlock() throws {
        guard Self.held.count(of: self) >= maximumConnections else { return }
        throw PostgresError(.invalidStatement, "this task holds all \(maximumConnections) connection(s) of the pool, in withConnection or transaction, "
                            + "and asked for another, which would wait forever: use the Connection given to that body, or a pool with more connections")
    }
}

/// How many connections of each pool one task holds (see ``Database/held``). Counted only for
/// the task that took them: a task started inside such a body inherits the value, but not
/// what it counts — it may wait for the holder, which may be done with its connections.
struct HeldConnections: Sendable {
    private var counts: [ObjectIdentifier: (task: Int, count: Int)] = [:]

    /// These, and one more of `database`'s, held by the running task.
    func adding(_ database: Database) -> HeldConnections {
        guard let task = Self.currentTask else { return self }
        var next = self
        let key = ObjectIdentifier(database)
        let held = counts[key].flatMap { $0.task == task ? $0.count : nil } ?? 0
        next.counts[key] = (task, held + 1)
        return next
    }

    /// How many of `database`'s connections the running task holds.
    func count(of database: Database) -> Int {
        guard let task = Self.currentTask, let held = counts[ObjectIdentifier(database)], held.task == task else { return 0 }
        return held.count
    }

    private static var currentTask: Int? { withUnsafeCurrentTask { $0?.hashValue } }
}
