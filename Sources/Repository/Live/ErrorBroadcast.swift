import Synchronization

/// Hands every reported error to every subscriber of ``LiveRepository/errors``. Each subscriber
/// has a buffer of at most ``bufferLimit`` errors it has not read yet; when it is full, the
/// oldest is dropped and counted in ``dropped``, so a subscriber that never reads holds a bounded
/// amount of memory.
final class ErrorBroadcast: Sendable {
    static let bufferLimit = 1000

    private let subscribers = Locked<(next: Int, continuations: [Int: AsyncStream<LiveRecordError>.Continuation])>((0, [:]))
    private let droppedCount = Atomic<Int>(0)

    /// Errors dropped from full buffers so far, over all subscribers.
    var dropped: Int { droppedCount.load(ordering: .relaxed) }

    /// A new subscriber's stream: every error reported from now on.
    func stream() -> AsyncStream<LiveRecordError> {
        let (stream, continuation) = AsyncStream<LiveRecordError>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = subscribers.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [subscribers] _ in
            _ = subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Gives `error` to every subscriber.
    func publish(_ error: LiveRecordError) {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) {
            if case .dropped = continuation.yield(error) { droppedCount.add(1, ordering: .relaxed) }
        }
    }

    /// Ends every subscriber's stream.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
