/// The parts of a value that Swift Observation may be tracking, each with how to tell whether
/// a change of the value changed it: a plain value, kept under its ``ObservedState``'s lock.
///
/// A part is kept exactly as long as Observation can still call back for it. The key path
/// registered for a part, `\.[part: key]`, carries a ``PartToken``; Observation holds that key
/// path while a tracking that read the part can still fire (in the tracking's access list, and
/// in the registrar's table of who observes what), and lets go when the tracking fires or is
/// cancelled; a sub-reference keeps the key of the part it last read while it lives (see
/// ``PartKeyCache``). When the last holder lets go, the token's `deinit` posts the part to an
/// inbox, and the next transition forgets it. So a part read outside any tracking through a
/// sub-reference that is not kept is forgotten as soon as the read returns, and a part whose
/// tracking ended — because this part changed or another one did — soon after. A change costs
/// what the parts tracked *now*, or read through sub-references still held, cost — never what
/// was read in the past.
///
/// A part is not forgotten when a change of it is told: a tracking installs itself with
/// Observation only once the reads it made return, so a change told in between does not reach
/// it, and the part must still be told of the next change.
@usableFromInline
struct ObservedParts {
    private struct Entry {
        let differs: (Any, Any) -> Bool
        /// Alive while Observation holds a key path naming this part.
        weak var token: PartToken?
        /// Which token: a part forgotten and registered again gets a new one.
        let number: UInt64
    }

    private var entries: [[AnyHashable]: Entry] = [:]
    private var lastNumber: UInt64 = 0
    /// Parts whose tokens died; shared with the tokens, which post to it from any thread.
    /// Lock order: the owner's lock may be held while this one is taken, never the reverse.
    private let inbox = Locked<[(path: [AnyHashable], number: UInt64)]>([])

    /// Whether no part is kept (some may have ended and not been forgotten yet).
    @usableFromInline var isEmpty: Bool { entries.isEmpty }

    /// How many parts are kept, once those that ended are forgotten.
    mutating func keptCount() -> Int {
        forgetEnded()
        return entries.count
    }

    /// The token for the part at `path`, read now under Observation; `differs` tells whether
    /// a change of the root value changed it. The token must be released outside the owner's
    /// lock (its `deinit` takes the inbox's lock only, but a caller should not rely on more).
    mutating func register(_ path: [AnyHashable], differs: @escaping (Any, Any) -> Bool) -> PartToken {
        forgetEnded()
        if let token = entries[path]?.token { return token }
        lastNumber += 1
        let token = PartToken(path: path, number: lastNumber, inbox: inbox)
        entries[path] = Entry(differs: differs, token: token, number: lastNumber)
        return token
    }

    /// The parts that the change from `old` to `new` changed and that Observation may still be
    /// tracking, as keys to tell it with. They stay registered until their tokens die (see above).
    @usableFromInline mutating func changed(from old: Any, to new: Any) -> [ObservationSubject.PartKey] {
        forgetEnded()
        guard !entries.isEmpty else { return [] }
        var keys: [ObservationSubject.PartKey] = []
        for (path, entry) in entries where entry.differs(old, new) {
            guard let token = entry.token else { continue }
            keys.append(.init(path: path, token: token))
        }
        return keys
    }

    /// Forgets the parts whose tokens died, unless registered again since.
    private mutating func forgetEnded() {
        let ended = inbox.withLock { inbox in
            defer { inbox.removeAll() }
            return inbox
        }
        for (path, number) in ended where entries[path]?.number == number {
            entries[path] = nil
        }
    }
}

/// Lives as long as Observation holds a key path naming one part (see ``ObservedParts``).
final class PartToken: @unchecked Sendable {
    // @unchecked: immutable; the path's components are `Sendable` key paths, indices and ids.
    private let path: [AnyHashable]
    private let number: UInt64
    private let inbox: Locked<[(path: [AnyHashable], number: UInt64)]>

    init(path: [AnyHashable], number: UInt64, inbox: Locked<[(path: [AnyHashable], number: UInt64)]>) {
        self.path = path
        self.number = number
        self.inbox = inbox
    }

    deinit {
        inbox.withLock { $0.append((path, number)) }
    }
}
