/// Announcements of the row while a write of it is under way.
extension SyncState {
    /// The row was announced changed (`operation`, to row version `version`): whether it must
    /// be read. An update announced while a write is under way may be that write's own (its
    /// version is not known before it commits): it is not read now; once the write is settled,
    /// the row is read unless every update announced meanwhile was to the version the state
    /// then holds (see ``settlingHeldAnnouncement(_:)``) — the write's own announcement, and
    /// nothing else.
    @usableFromInline mutating func announced(_ operation: Change.Operation, version: Int64) -> Bool {
        guard lifecycle == .live, operation == .update else { return true }
        if Content.rowVersion(committed.version) == version { return false }
        guard hasInFlight, !inFlightIsAbandoned else { return true }
        switch heldAnnouncement {
        case nil: heldAnnouncement = .version(version)
        case .version(let held) where held != version: heldAnnouncement = .several
        case .version, .several: break
        }
        return false
    }

    /// Runs a transition that may end the write under way; then, if an announcement was held
    /// for it and the state held is not at the announced version, reads the row — also when
    /// the row was found deleted meanwhile: the update may be of a row inserted again since.
    mutating func settlingHeldAnnouncement(_ transition: (inout Self) -> SyncEffects) -> SyncEffects {
        var effects = transition(&self)
        if !hasInFlight, let held = heldAnnouncement {
            heldAnnouncement = nil
            if held != .version(Content.rowVersion(committed.version)) { effects.reread = true }
        }
        return effects
    }
}

/// The updates announced while a write was under way, held until it settles.
@usableFromInline
enum HeldAnnouncement: Equatable {
    /// All to this version.
    case version(Int64)
    /// To more than one version: whatever the write left, the row is read.
    case several
}
