import Synchronization

/// Numbers reads as they start, across a repository: a read numbered higher started later,
/// so it saw at least every commit an earlier-numbered read could have been told about.
///
/// While the change feed applies rows whose commits new snapshots may not see yet (see
/// ``ChangeVisibility``), reads are held (``holdReads()``): one that starts meanwhile gets its
/// number once the feed has waited for the commits to be visible, so a read numbered after such
/// a row saw it. (Should that wait fail, the reads go ahead all the same, and the feed's next
/// session delivers the batch again, since it was not confirmed.)
@usableFromInline
final class ReadSequence: Sendable {
    private let counter = Atomic<UInt64>(0)
    /// How many holds are in place, and the reads waiting for their number. A leaf lock: taken
    /// with any other lock held (the feed's thread takes it inside no lock of its own), and
    /// nothing is taken under it; continuations are resumed after it is released.
    private let holds = Locked<(count: Int, waiting: [CheckedContinuation<UInt64, Never>])>((0, []))

    /// The number of the last read started.
    @usableFromInline var current: UInt64 { counter.load(ordering: .sequentiallyConsistent) }

    /// The next number; every call gets a higher one. For what is numbered as it arrives (a
    /// write's result, a streamed row) and reads on the change feed's thread, which start only
    /// once the feed's changes are visible.
    @usableFromInline func next() -> UInt64 {
        counter.add(1, ordering: .sequentiallyConsistent).newValue
    }

    /// The number of a read about to start: at once, unless reads are held; then once they are
    /// released. (Not cancellable: a hold lasts one round trip, bounded by the feed's deadline.)
    @usableFromInline func nextRead() async -> UInt64 {
        // Checked and drawn under the lock that `holdReads` takes: a number drawn after a hold
        // began (a streamed row's) is higher than any read's drawn before it.
        if let number = holds.withLock({ $0.count == 0 ? next() : nil }) { return number }
        return await withCheckedContinuation { continuation in
            let number: UInt64? = holds.withLock { holds in
                guard holds.count == 0 else {
                    holds.waiting.append(continuation)
                    return nil
                }
                return next()
            }
            if let number { continuation.resume(returning: number) }
        }
    }

    /// Waits while reads are held: for a read whose result is not numbered (a live SQL query's),
    /// and for a write, whose `WHERE xmin = …` reads the row's version.
    func readsMayStart() async {
        _ = await nextRead()
    }

    /// How many reads wait for a release (for tests).
    var waitingReads: Int { holds.withLock { $0.waiting.count } }

    /// Reads that start from now on wait for ``releaseReads()``.
    func holdReads() {
        holds.withLock { $0.count += 1 }
    }

    /// Ends a hold; when it was the last, the reads waiting get their numbers, drawn now.
    func releaseReads() {
        let released: [(CheckedContinuation<UInt64, Never>, UInt64)] = holds.withLock { holds in
            holds.count -= 1
            guard holds.count == 0 else { return [] }
            defer { holds.waiting = [] }
            return holds.waiting.map { ($0, next()) }
        }
        for (waiter, number) in released { waiter.resume(returning: number) }
    }
}
