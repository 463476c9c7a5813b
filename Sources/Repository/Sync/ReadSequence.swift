import Synchronization

/// Numbers reads as they start, across a repository: a read numbered higher started later,
/// so it saw at least every commit an earlier-numbered read could have been told about.
final class ReadSequence: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// The number of the last read started.
    var current: UInt64 { counter.load(ordering: .sequentiallyConsistent) }

    /// The next number; every call gets a higher one.
    func next() -> UInt64 {
        counter.add(1, ordering: .sequentiallyConsistent).newValue
    }
}
