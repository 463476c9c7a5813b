import Synchronization

/// The key path a sub-reference registered its part under with Swift Observation (see
/// ``ObservedParts``), kept while the sub-reference lives: reading it again makes no key path
/// and registers nothing — making the key path, with the part's key as its argument, is most of
/// what registering a part costs.
///
/// The key path holds its part's token, so a part read through a sub-reference that is still
/// held stays registered while it is held: each change of the root asks whether it changed it.
final class PartKeyCache: Sendable {
    /// A leaf lock: nothing is taken under it, and no owner's lock is held while it is taken.
    /// (A `Mutex` lives inside the object: a sub-reference made for one read allocates no more.)
    private let kept = Mutex<KeyPath<ObservationSubject, Int>?>(nil)

    /// The key path kept, once the part was registered.
    var keyPath: KeyPath<ObservationSubject, Int>? { kept.withLock { $0 } }

    /// The key path naming `key`, kept from now on (the first kept stays, if another thread
    /// registered the part meanwhile: both name the same part).
    func keyPath(for key: ObservationSubject.PartKey) -> KeyPath<ObservationSubject, Int> {
        let made = \ObservationSubject.[part: key]
        return kept.withLock { kept in
            if let kept { return kept }
            kept = made
            return made
        }
    }
}
