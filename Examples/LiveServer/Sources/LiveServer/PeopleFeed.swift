import AddressBookKit
import Foundation
import Hummingbird
import IdentifiedCollections
import Repository
import Synchronization

/// A live list of people — everyone, the one `GET /people` reads, or a client's own query —
/// as numbered changes, for `GET /people/events`.
///
/// Each change of the list is one event: the people it inserted or changed, each with the id
/// of the person now before them (nil: first), and the ids it removed. A client that applies
/// the people in the order given, each after its predecessor, has the server's order without
/// comparing names itself. Event ids are `<epoch>-<number>`, the epoch drawn when the process
/// starts; a client that comes back with a `Last-Event-ID` of this process's recent past gets
/// one event with what changed since (the people as they are now, and the ids gone), and
/// otherwise — another process's id, or one older than the retained changes — the whole list.
final class PeopleFeed<Element: Identifiable & Encodable & Equatable & Sendable>: Sendable where Element.ID == Int64 {
    private struct State {
        var people: IdentifiedArrayOf<Element> = []
        var number = 0
        /// The ids each recent change touched, oldest first.
        var recent: [(number: Int, ids: Set<Int64>)] = []
        var streams: [Int: AsyncStream<String>.Continuation] = [:]
        var nextStream = 0
    }

    /// Drawn once per process: an event id of another process means the whole list.
    let epoch = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    private let retained: Int
    private let state = Mutex(State())
    private let subscription = Mutex<Subscription?>(nil)
    /// The list followed, kept alive as long as the feed is.
    private let list: Var<IdentifiedArrayOf<Element>>

    /// Follows `list`, keeping the ids of its last `retained` changes for clients that resume.
    init(_ list: Var<IdentifiedArrayOf<Element>>, retaining retained: Int = 1_000) {
        self.retained = retained
        self.list = list
        let following = list.observe(initial: true) { [weak self] update in self?.apply(update.new) }
        subscription.withLock { $0 = following }
    }

    /// The events for one client: what it lacks (after `lastEventID`, or the whole list), then
    /// every change. Ends when the consumer stops.
    func events(after lastEventID: String?) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let key = state.withLock { state in
            state.nextStream += 1
            return state.nextStream
        }
        // Not here: the runtime may run this holding the ending task's status lock, while
        // `apply` holds `state` and yields — which needs that lock to resume the task.
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            DispatchQueue.global().async { _ = self.state.withLock { $0.streams.removeValue(forKey: key) } }
        }
        state.withLock { state in
            if let first = catchUp(from: lastEventID, state) { continuation.yield(first) }
            state.streams[key] = continuation
        }
        return stream
    }

    private func apply(_ people: IdentifiedArrayOf<Element>) {
        state.withLock { state in
            let changes = CollectionChanges(from: state.people, to: people)
            guard !changes.isEmpty else { return }
            state.people = people
            state.number += 1
            let ids = Set(changes.inserted + changes.updated + changes.removed)
            state.recent.append((state.number, ids))
            if state.recent.count > retained { state.recent.removeFirst(state.recent.count - retained) }
            let event = changesEvent(ids, state)
            for (key, stream) in state.streams {
                // One that ended before it was listed here.
                if case .terminated = stream.yield(event) { state.streams[key] = nil }
            }
        }
    }

    /// What a client that saw `lastEventID` lacks: nil when nothing.
    private func catchUp(from lastEventID: String?, _ state: State) -> String? {
        guard let lastEventID, let seen = seenNumber(lastEventID), seen <= state.number else { return snapshotEvent(state) }
        guard seen < state.number else { return nil }
        guard let oldest = state.recent.first?.number, oldest <= seen + 1 else { return snapshotEvent(state) }
        let missed = state.recent.filter { $0.number > seen }.reduce(into: Set<Int64>()) { $0.formUnion($1.ids) }
        return changesEvent(missed, state)
    }

    /// The change number in an event id of this process.
    private func seenNumber(_ eventID: String) -> Int? {
        let parts = eventID.split(separator: "-")
        guard parts.count == 2, parts[0] == epoch else { return nil }
        return Int(parts[1])
    }

    private func snapshotEvent(_ state: State) -> String {
        EventStream.event("snapshot", id: "\(epoch)-\(state.number)", data: jsonLine(Snapshot(people: state.people.elements)))
    }

    private func changesEvent(_ ids: Set<Int64>, _ state: State) -> String {
        let placed = ids.compactMap { id in state.people.index(id: id).map { (index: $0, id: id) } }.sorted { $0.index < $1.index }
        let change = ListChange(
            people: placed.map { PlacedPerson(after: $0.index == 0 ? nil : state.people.ids[$0.index - 1], person: state.people.elements[$0.index]) },
            removed: ids.filter { state.people[id: $0] == nil }.sorted())
        return EventStream.event("changes", id: "\(epoch)-\(state.number)", data: jsonLine(change))
    }

    private func jsonLine(_ value: some Encodable) -> String {
        (try? Response.jsonText(value)) ?? "{}"
    }
}
