/// The parts a ``SyncState`` keeps: edits not yet written, the write under way, and failures
/// waiting for a `save()`.
extension SyncState {
    /// A local edit of one field not yet written: the value it was made on, the number of the
    /// last read started before it (a read numbered higher started after the edit), and the
    /// first and last local edits (by count) it carries.
    struct Edit: Sendable {
        var base: Value
        var since: UInt64
        var edits: ClosedRange<UInt64>
    }

    /// A failure, and the local edits (by count) it undid. Every `save()` waiting for one of
    /// them throws it; so does the first `save()` called after the last of them, after which
    /// it is gone.
    struct Failure {
        let error: LiveRecordError
        let edits: ClosedRange<UInt64>
    }

    /// A write under way: the fields it sets, the value it takes them from, the committed
    /// state it expects, and the last local edit it carries.
    struct Write: Sendable {
        let fields: Set<Field>
        let snapshot: Value
        let base: Committed<Content>
        /// Each field's edit.
        let edits: [Field: Edit]
        let through: UInt64
        /// The number of the last read started when the write was sent: its result shows the
        /// row no later than its commit, which edits made after this may follow.
        let sentAfter: UInt64
        /// The number of the read (or write) that produced the state held when the write was sent.
        let appliedWhenSent: UInt64
    }
}

extension SyncState: ValueHolding {
    var root: Value { value }

    /// The fields this process has edited that the database does not hold yet.
    var localFields: Set<Field> {
        guard let inFlight, !inFlightIsAbandoned else { return Set(pending.keys) }
        return Set(pending.keys).union(inFlight.fields)
    }

    /// The local edits (by count) that the edits of `fields` carry; the latest when none is known.
    func editRange(of fields: Set<Field>) -> ClosedRange<UInt64> {
        let ranges = fields.flatMap { field in [pending[field]?.edits, inFlight?.edits[field]?.edits].compactMap { $0 } }
        return (ranges.map(\.lowerBound).min() ?? edits)...(ranges.map(\.upperBound).max() ?? edits)
    }

    /// The conflict of `fields` between our value and theirs, as reported.
    func conflictError(_ fields: Set<Field>, ours: Value, theirs: Value) -> LiveRecordError {
        .conflict(table: table, key: key, columns: fields.map(Content.name).sorted(), ours: ours, theirs: theirs, policy: policy)
    }

    /// `row` with this process's unsaved edits on top.
    func overlayingLocalEdits(on row: Value) -> Value {
        if pending.isEmpty && (inFlight == nil || inFlightIsAbandoned) { return row }
        let local = localFields
        return local.isEmpty ? row : Content.replacing(local, in: row, from: value)
    }
}
