import Synchronization

extension Database {
    /// The pooled connections the running task holds in the bodies of ``withConnection(_:)``
    /// and ``transaction(_:)``: a task that holds all of a pool's connections and asks it for
    /// another (`database.query` inside `database.transaction`, say, with one connection)
    /// would wait for itself forever — it is told so instead.
    @TaskLocal static var held = HeldConnections()

    /// Runs `body`, counting one more of this pool's connections as held by the running task.
    func holding<T>(_ body: () async throws -> T) async throws -> T {
        guard let hold = ConnectionHold(database: self) else { return try await body() }
        defer { hold.end() }
        return try await Self.$held.withValue(Self.held.adding(hold)) { try await body() }
    }

    /// Whether the running task holds every connection of this pool: nothing it waits for can get one.
    var isHeldWhole: Bool { Self.held.count(of: self) >= maximumConnections }

    /// Throws when the running task holds every connection of this pool: a checkout would never end.
    func refuseSelfDeadlock() throws {
        guard isHeldWhole else { return }
        throw PostgresError(.invalidStatement, "this task holds all \(maximumConnections) connection(s) of the pool, in withConnection or transaction, "
                            + "and asked for another, which would wait forever: use the Connection given to that body, or a pool with more connections")
    }
}

/// The connections one task holds (see ``Database/held``). A task started inside such a body
/// inherits the value, but is not the holder: it may wait for the holder, which may be done
/// with its connections — so only holds of the running task, still under way, count.
struct HeldConnections: Sendable {
    private var holds: [ConnectionHold] = []

    /// These, and `hold`.
    func adding(_ hold: ConnectionHold) -> HeldConnections {
        var next = self
        next.holds.append(hold)
        return next
    }

    /// How many of `database`'s connections the running task holds.
    func count(of database: Database) -> Int {
        guard !holds.isEmpty, let task = ConnectionHold.currentTask else { return 0 }
        return holds.count { $0.database == ObjectIdentifier(database) && $0.task == task && $0.isUnderWay }
    }
}

/// One body holding one pooled connection, by one task. The task's identity (its address) is
/// compared only while the hold is under way — while the task is alive, so no other task has
/// that address; a hold that ended counts for no one, whatever task later reuses the address.
final class ConnectionHold: Sendable {
    let database: ObjectIdentifier
    let task: Int
    private let underWay = Atomic<Bool>(true)

    /// A hold by the running task; nil outside any task (nothing to tell apart).
    init?(database: Database) {
        guard let task = Self.currentTask else { return nil }
        (self.database, self.task) = (ObjectIdentifier(database), task)
    }

    var isUnderWay: Bool { underWay.load(ordering: .acquiring) }

    /// The body returned or threw.
    func end() { underWay.store(false, ordering: .releasing) }

    static var currentTask: Int? { withUnsafeCurrentTask { $0?.hashValue } }
}
