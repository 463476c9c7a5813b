/// Announcements of the row while a write of it is under way.
extension SyncState {
    /// The row was announced changed (`operation`, to row version `version`): whether it must
    /// be read. An update to the version the write under way would produce is, unless that
    /// write conflicts, its own: it is not read now, and is read once the write is settled if
    /// the state then held is not at that version (see ``settlingHeldAnnouncement(_:)``).
    mutating func announced(_ operation: Change.Operation, version: Int64) -> Bool {
        guard lifecycle == .live, operation == .update else { return true }
        if Content.rowVersion(committed.version) == version { return false }
        guard let inFlight, !inFlightIsAbandoned, version == Content.rowVersion(inFlight.base.version) + 1 else { return true }
        heldAnnouncement = version
        return false
    }

    /// Runs a transition that may end the write under way; then, if an announcement was held
    /// for it and the state held is not at the announced version, reads the row.
    mutating func settlingHeldAnnouncement(_ transition: (inout Self) -> SyncEffects) -> SyncEffects {
        var effects = transition(&self)
        if inFlight == nil, let held = heldAnnouncement {
            heldAnnouncement = nil
            if lifecycle == .live, Content.rowVersion(committed.version) != held { effects.reread = true }
        }
        return effects
    }
}
