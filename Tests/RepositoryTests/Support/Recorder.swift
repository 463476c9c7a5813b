import Synchronization

/// Collects what handlers saw, from any thread.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])

    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var all: [Element] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}
