/// Rows from the logical replication stream, taken without reading the table again.
///
/// The stream delivers each committed version of a row in commit order, but some time after
/// the commit: a read on the pool may have shown a later one meanwhile (our own write's
/// result, most often). A row from the stream is taken only when the state is known not to be
/// ahead of it: when the state holds a version the stream delivered before, through the same
/// slot (``streamed``) — then the row is a later commit, the state that follows the one held.
/// In any other case the change is an announcement like any other (``announced(_:version:)``):
/// the versions are compared, and the row is read when they differ. A row is never moved back.
extension SyncState {
    /// Whether the row the stream delivers at `position` would be taken (to decode it only then).
    @inlinable func takesStreamed(at position: StreamedVersion) -> Bool {
        lifecycle == .live && !hasInFlight && position.version != 0
            && streamed == StreamedVersion(epoch: position.epoch, version: Content.rowVersion(committed.version))
    }

    /// The stream delivered `operation` of the row; `position` and `row` when it carried the row
    /// (nil `row`: it carried one that does not decode here). Taken, the row is numbered
    /// `sequence`, which must be newer than every read applied so far; otherwise, whether the
    /// row must be read.
    @inlinable mutating func streamed(_ operation: Change.Operation, version: Int64, at position: StreamedVersion?, row: Committed<Content>?,
                           sequence: UInt64) -> (stale: Bool, taken: Bool, effects: SyncEffects) {
        guard let position else { return (announced(operation, version: version), false, SyncEffects()) }
        let takes = takesStreamed(at: position)
        streamed = position
        guard takes, let row, sequence > appliedSequence else { return (announced(operation, version: version), false, SyncEffects()) }
        // Seen after no read in particular: an edit the row happens to hold is written all the same.
        return (false, true, adopt(row, sequence: sequence, byWrite: false, seenAfter: 0))
    }
}

/// A row's version as the replication stream delivered it, and which slot's stream that was
/// (see ``StreamedRow/epoch``).
@usableFromInline
struct StreamedVersion: Equatable, Sendable {
    @usableFromInline let epoch: UInt64
    @usableFromInline let version: Int64

    @usableFromInline init(epoch: UInt64, version: Int64) { (self.epoch, self.version) = (epoch, version) }
}
