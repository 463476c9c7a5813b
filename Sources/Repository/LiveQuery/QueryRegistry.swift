/// The repository's live queries, as announcements reach them: each record type's router
/// (``RecordQueryRouter``, kept while the repository lives) and the queries that follow tables
/// on their own (live `SELECT`s, aggregates' membership), held weakly — a query lives as long
/// as some handle onto its result.
///
/// One value behind one lock (``LiveRepository/queries``), a leaf: nothing else is taken while
/// it is held, and the queries it returns are called after it is released.
struct QueryRegistry: Sendable {
    /// Each record type's router, by the record type.
    private var routers: [ObjectIdentifier: any AnyLiveQuery] = [:]
    /// Every query announcements go to, routers included, in the order they came.
    private var followers: [WeakQuery] = []

    /// The router made for the record type `type`, if any.
    func router(for type: ObjectIdentifier) -> (any AnyLiveQuery)? {
        routers[type]
    }

    /// Keeps `fresh` as the router of the record type `type`, routing rows to the stores of
    /// type `storeType` — unless another was kept meanwhile (two first queries at once): the
    /// router kept.
    mutating func keep(router fresh: any AnyLiveQuery, for type: ObjectIdentifier, routesRowsTo storeType: ObjectIdentifier) -> any AnyLiveQuery {
        if let raced = routers[type] { return raced }
        routers[type] = fresh
        followers.append(WeakQuery(query: fresh, routesRowsTo: storeType))
        return fresh
    }

    /// Adds a query that follows its tables itself; queries released since are dropped.
    mutating func add(_ query: any AnyLiveQuery) {
        followers.removeAll { $0.query == nil }
        followers.append(WeakQuery(query: query))
    }

    /// The queries announcements go to now, each with the type of the stores it routes rows
    /// to (nil: it reads what it shows itself); queries released since are dropped.
    mutating func live() -> [(query: any AnyLiveQuery, routesRowsTo: ObjectIdentifier?)] {
        var live: [(query: any AnyLiveQuery, routesRowsTo: ObjectIdentifier?)] = []
        followers.removeAll { follower in
            guard let query = follower.query else { return true }
            live.append((query, follower.routesRowsTo))
            return false
        }
        return live
    }

    /// How many queries are held, released ones not yet dropped included (for tests).
    var count: Int { followers.count }
}

/// A weak reference: a query lives as long as some handle onto its result.
struct WeakQuery: Sendable {
    weak var query: (any AnyLiveQuery)?
    /// For a query that routes whole rows of its table (a query over records): the type of
    /// the live stores it gives them to — those of its own record type, not another type's
    /// over the same table.
    var routesRowsTo: ObjectIdentifier?
}
