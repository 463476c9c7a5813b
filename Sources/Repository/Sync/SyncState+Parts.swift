/// The parts a ``SyncState`` keeps: edits not yet written, and the write under way (the
/// `save()` calls and failures are its ``SaveLedger``).
extension SyncState {
    /// A local edit of one field not yet written: the value it was made on, the number of the
    /// last read started before it (a read numbered higher started after the edit), the first
    /// and last local edits (by count) it carries, and the tasks that made them.
    @usableFromInline struct Edit: Sendable {
        @usableFromInline var base: Value
        @usableFromInline var since: UInt64
        var edits: ClosedRange<UInt64>
        var editors: EditorEdits

        /// Local edit number `edit`, by `editor`, set this field again to the value it shows.
        mutating func carry(_ edit: UInt64, by editor: Editor?) {
            edits = edits.lowerBound...edit
            if let editor { editors.add(editor, edit: edit) }
        }
    }

    /// A write under way: the fields it sets, the value it takes them from, the committed
    /// state it expects, and the last local edit it carries.
    @usableFromInline struct Write: Sendable {
        @usableFromInline let fields: Set<Field>
        let snapshot: Value
        let base: Committed<Content>
        /// Each field's edit.
        var edits: [Field: Edit]
        let through: UInt64
        /// The number of the last read started when the write was sent: its result shows the
        /// row no later than its commit, which edits made after this may follow.
        let sentAfter: UInt64
        /// The number of the read (or write) that produced the state held when the write was sent.
        let appliedWhenSent: UInt64
    }
}

extension SyncState: ValueHolding {
    @usableFromInline var root: Value { value }

    /// The fields this process has edited that the database does not hold yet.
    /// Whether edits made here are pending or being written (an abandoned write's are not).
    @usableFromInline var hasLocalEdits: Bool { hasPending || (hasInFlight && !inFlightIsAbandoned) }

    @usableFromInline var localFields: Set<Field> {
        guard let inFlight, !inFlightIsAbandoned else { return Set(pending.keys) }
        return Set(pending.keys).union(inFlight.fields)
    }

    /// The local edits that the edits of `fields` carry; the latest when none is known.
    @usableFromInline func lostEdits(of fields: Set<Field>) -> LostEdits {
        let writing = inFlightIsAbandoned ? nil : inFlight  // an abandoned write's edits were reported lost already
        let carried = fields.flatMap { field in [pending[field], writing?.edits[field]].compactMap { $0 } }
        return LostEdits(range: (carried.map(\.edits.lowerBound).min() ?? edits)...(carried.map(\.edits.upperBound).max() ?? edits),
                         editors: carried.reduce(EditorEdits()) { $0.union($1.editors) })
    }

    /// The conflict of `fields` between our value and theirs, as reported.
    @usableFromInline func conflictError(_ fields: Set<Field>, ours: Value, theirs: Value) -> LiveRecordError {
        .conflict(table: table, key: key, columns: Content.conflictNames(fields, theirs: theirs), ours: ours, theirs: theirs, policy: policy)
    }

    /// `row` with this process's unsaved edits on top, exactly (see ``SyncContent/replacing(_:in:from:)``).
    @inlinable func overlayingLocalEdits(on row: Value) throws -> Value {
        if !hasLocalEdits { return row }
        let local = localFields
        return local.isEmpty ? row : try Content.replacing(local, in: row, from: value)
    }
}
