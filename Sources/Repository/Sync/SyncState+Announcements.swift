/// Announcements of the row while a write of it is under way.
extension SyncState {
    /// The row was announced changed (`operation`, to row version `version`): whether it must
    /// be read. An update announced while a write is under way may be that write's own (its
    /// version is not known before it commits): it is not read now; once the write is settled,
    /// the row is read if the state then held is not at the last version announced meanwhile
    /// (see ``settlingHeldAnnouncement(_:)``). Announcements arrive in commit order, so that
    /// one is the newest: if the write's result is at it, nothing committed after the write.
    mutating func announced(_ operation: Change.Operation, version: Int64) -> Bool {
        guard lifecycle == .live, operation == .update else { return true }
        if Content.rowVersion(committed.version) == version { return false }
        guard inFlight != nil, !inFlightIsAbandoned else { return true }
        heldAnnouncement = version
        return false
    }

    /// Runs a transition that may end the write under way; then, if an announcement was held
    /// for it and the state held is not at the announced version, reads the row — also when
    /// the row was found deleted meanwhile: the update may be of a row inserted again since.
    mutating func settlingHeldAnnouncement(_ transition: (inout Self) -> SyncEffects) -> SyncEffects {
        var effects = transition(&self)
        if inFlight == nil, let held = heldAnnouncement {
            heldAnnouncement = nil
            if Content.rowVersion(committed.version) != held { effects.reread = true }
        }
        return effects
    }
}
