import Foundation

/// The replication slot a change feed's sessions share across outages — its name, and how far
/// the feed handed the stream on — so that a new session resumes where the last one stopped.
/// Used by the feed's thread alone.
///
/// The slot is permanent, so that it outlives a lost connection; it is dropped when the feed
/// stops. A process that dies leaves its slot behind, holding WAL: any process following a
/// publication drops the library's inactive slots (named `live_feed_…`) that hold back more
/// than `abandonAfter` bytes of WAL, or that the server gave up on (`max_slot_wal_keep_size`).
/// A feed whose slot was dropped during its outage starts a new one, and re-reads everything.
final class ReplicationSlot {
    static let prefix = "live_feed_"

    private(set) var name: String?
    /// The end of the last transaction handed on: where a resumed stream starts.
    var confirmed: UInt64 = 0
    /// Whether the slot can never go on (see ``cannotResume()``): the next session drops it
    /// and starts a new one.
    private(set) var mustStartAnew = false
    /// Changes with the number of the slot they came from (see ``StreamedRow/epoch``): a new
    /// one for every slot this feed starts.
    private(set) var epoch: UInt64 = 0
    let abandonAfter: Int

    init(abandonAfter: Int) {
        self.abandonAfter = abandonAfter
    }

    /// A new slot's name, unique on the server: this process's id and a random part.
    static func freshName() -> String {
        "\(prefix)\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Streaming from the slot `fresh` started: it is this feed's from now on (before that, a
    /// session that resumed it would skip what was committed before it was made).
    func adopt(_ fresh: String) {
        (name, confirmed, epoch, mustStartAnew) = (fresh, 0, Self.nextEpoch(), false)
    }

    /// The server refused to go on decoding the slot's changes in a way resuming cannot mend: a
    /// publication dropped while changes after it were still to be decoded (the slot decodes
    /// each change with the catalog of its time, so making the publication again does not
    /// help), or the slot gone.
    func cannotResume() {
        mustStartAnew = true
    }

    /// Drops this feed's slot, which can never go on (see ``cannotResume()``), on `connection`:
    /// once the walsender of the session that used it has let it go, within `deadline`. One
    /// left behind is dropped later as abandoned.
    func dropUnusable(on connection: FeedConnection, deadline: Duration) {
        guard mustStartAnew, let name else { return }
        self.name = nil
        Self.drop(name, on: connection, deadline: deadline)
    }

    /// Drops this library's slots that no session uses and that hold back more than
    /// `abandonAfter` bytes of WAL (or that the server invalidated) — with `all`, every one of
    /// them (the server has no slot left) — but not this feed's own.
    func dropAbandoned(on connection: FeedConnection, deadline: Duration, all: Bool = false) throws {
        do {
            _ = try connection.query("""
                SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
                WHERE slot_type = 'logical' AND database = current_database() AND NOT active
                  AND starts_with(slot_name, $1) AND slot_name <> $2
                  AND (wal_status = 'lost' OR pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) > $3)
                """, [.text(Self.prefix), .text(name ?? ""), .text(String(all ? -1 : abandonAfter))], deadline: deadline)
        } catch let error as PostgresError where ["42704", "55006"].contains(error.sqlState) {
            // Another process dropped one first, or a session took one up meanwhile.
        }
    }

    /// Drops this feed's slot (the feed stops): once its session's connection is gone, within
    /// `deadline`. What remains, if this fails, is dropped later as abandoned.
    func drop(_ configuration: ConnectionConfiguration, deadline: Duration, types: TypeCatalog) {
        guard let name else { return }
        self.name = nil
        guard let connection = try? FeedConnection(configuration, channel: nil, deadline: deadline, types: types) else { return }
        Self.drop(name, on: connection, deadline: deadline)
    }

    /// Drops the slot `name` once no walsender holds it any more, trying for `deadline`.
    private static func drop(_ name: String, on connection: FeedConnection, deadline: Duration) {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            _ = try? connection.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active",
                                      [.text(name)], deadline: deadline)
            // Gone (or the server cannot say): done. Still held by the walsender of the session
            // just closed, for a moment: again shortly.
            guard let left = try? connection.query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", [.text(name)], deadline: deadline),
                  !left.isEmpty else { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
