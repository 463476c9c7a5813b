/// How the sync engine sees what one live value holds: a value made of fields that can be
/// edited, compared and carried over one by one — a record's columns; an aggregate's root
/// columns, child columns, child presence and child order.
///
/// The engine never diffs against a base that may have moved: it records which fields an edit
/// changed when the edit is made, and later carries exactly those fields over newer committed
/// values.
@usableFromInline
protocol SyncContent {
    /// What handles hold.
    associatedtype Value: Sendable
    /// One independently writable part of a value.
    associatedtype Field: Hashable & Sendable
    /// What the optimistic write check compares (`WHERE version = $n`).
    associatedtype Version: Equatable & Sendable

    /// The writable fields in which `new` differs from `old`; throws when they cannot be told
    /// (a value that cannot be encoded), and the edit is refused.
    static func fields(changedFrom old: Value, to new: Value) throws -> Set<Field>
    /// The fields among `fields` at which `a` and `b` differ.
    static func differing(_ a: Value, _ b: Value, among fields: Set<Field>) -> Set<Field>
    /// `target` with `fields` taken from `source` exactly, every other bit from `target`;
    /// throws when that cannot be made (never a value that lost an edit).
    static func replacing(_ fields: Set<Field>, in target: Value, from source: Value) throws -> Value
    /// Whether `a` and `b` differ anywhere as the database holds them (observers are told only
    /// of real changes).
    static func differs(_ a: Value, _ b: Value) -> Bool
    /// ``differs(_:_:)`` for two values both as the database gave them, no local edit on
    /// either — cheaper where that can be told apart without encoding them.
    static func differsAsRead(_ a: Value, _ b: Value) -> Bool
    /// Whether a write that succeeded committed right after the state it was based on, nothing
    /// between them: a record's `UPDATE` matches its base's `xmin`. (An aggregate's does not
    /// check the children it leaves alone.)
    static var writeCommitsRightAfterBase: Bool { get }
    /// How an error message names `field`.
    static func name(of field: Field) -> String
    /// How a conflict with `theirs` names `fields`, sorted: by default each by ``name(of:)``.
    static func conflictNames(_ fields: Set<Field>, theirs: Value) -> [String]
    /// The version change announcements carry for the value's own row (an aggregate's root).
    static func rowVersion(_ version: Version) -> Int64
    /// The version of the child row with this key (as announcements spell it) held in
    /// `version`; nil when there is no such child (records have none).
    static func childVersion(forKey key: String, in version: Version) -> Int64?
    /// The versions of the rows `committed` came from: its own row's, then its children's in
    /// its order (``CommittedVersion/rows``).
    static func rowVersions(_ committed: Committed<Self>) -> [Int64]
}

extension SyncContent {
    @usableFromInline static func childVersion(forKey key: String, in version: Version) -> Int64? { nil }
    static func differsAsRead(_ a: Value, _ b: Value) -> Bool { differs(a, b) }
    @usableFromInline static var writeCommitsRightAfterBase: Bool { false }
    @usableFromInline static func conflictNames(_ fields: Set<Field>, theirs: Value) -> [String] { fields.map(name).sorted() }
}

extension SyncContent where Version == Int64 {
    /// One row, one version (records).
    @usableFromInline static func rowVersions(_ committed: Committed<Self>) -> [Int64] { [committed.version] }
}

/// A committed state: a value as the database holds it, with its version.
@usableFromInline
struct Committed<Content: SyncContent>: Sendable {
    @usableFromInline var value: Content.Value
    @usableFromInline var version: Content.Version

    @usableFromInline init(value: Content.Value, version: Content.Version) {
        (self.value, self.version) = (value, version)
    }
}

/// What a transition of ``SyncState`` asks its owner to do, outside the lock.
@usableFromInline
struct SyncEffects: Sendable {
    /// Tell observers the value changed, on behalf of this author.
    @usableFromInline var publish: Author?
    /// Start the write loop (none is running).
    @usableFromInline var startWriting = false
    /// Read the row again: a read was skipped that may have been newer.
    @usableFromInline var reread = false
    /// For the `errors` stream: every failure, and conflicts settled in our favour.
    @usableFromInline var reports: [LiveRecordError] = []
    /// `save()` callers to resume, with what they throw.
    @usableFromInline var wake: [(ticket: Int, failure: LiveRecordError?)] = []

    @usableFromInline
    init(publish: Author? = nil, startWriting: Bool = false, reread: Bool = false, reports: [LiveRecordError] = [],
         wake: [(ticket: Int, failure: LiveRecordError?)] = []) {
        (self.publish, self.startWriting, self.reread, self.reports, self.wake) = (publish, startWriting, reread, reports, wake)
    }

    /// Asks for nothing.
    @usableFromInline var isNothing: Bool { publish == nil && !startWriting && !reread && reports.isEmpty && wake.isEmpty }

    @usableFromInline static func + (lhs: SyncEffects, rhs: SyncEffects) -> SyncEffects {
        if rhs.isNothing { return lhs }
        if lhs.isNothing { return rhs }
        return SyncEffects(publish: rhs.publish ?? lhs.publish, startWriting: lhs.startWriting || rhs.startWriting,
                    reread: lhs.reread || rhs.reread, reports: lhs.reports + rhs.reports, wake: lhs.wake + rhs.wake)
    }
}
