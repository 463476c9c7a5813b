@testable import Repository

/// Collects what handlers saw, from any thread. Behind a pthread lock (``Locked``), which the
/// thread sanitizer sees: `Synchronization.Mutex` waits on a futex it does not see.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])

    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var all: [Element] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}
