import Observation
@testable import Repository
import Testing

/// When a `@Tracked` wrapper learns its owner: at `startTracking()`, or at the first read.
@Suite("@Tracked: the owner hears changes made before it read the property")
struct TrackedOwnerTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var visits: Int
    }

    @Observable class StartedModel: TrackingOwner {
        @ObservationIgnored @Tracked var profile: Var<Profile>
        @ObservationIgnored var changes: [TrackedChange] = []
        init(_ profile: Var<Profile>) {
            _profile = Tracked(wrappedValue: profile)
            startTracking()
        }
        func trackedVarDidChange(_ change: TrackedChange) { changes.append(change) }
    }

    /// A subclass: its own and its superclass's `@Tracked` properties are both wired.
    final class DerivedModel: StartedModel {
        @ObservationIgnored @Tracked var other: Var<Profile>
        init(_ profile: Var<Profile>, other: Var<Profile>) {
            _other = Tracked(wrappedValue: other)
            super.init(profile)
            startTracking()
        }
    }

    final class LazyModel: TrackingOwner {
        @Tracked var profile: Var<Profile>
        var changes: [TrackedChange] = []
        init(_ profile: Var<Profile>) { _profile = Tracked(wrappedValue: profile) }
        func trackedVarDidChange(_ change: TrackedChange) { changes.append(change) }
    }

    final class AnnouncingContactModel: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var contact: Var<Contact>
        init(_ contact: Var<Contact>) {
            _contact = Tracked(wrappedValue: contact)
            startTracking()
        }
    }

    @Test("startTracking(): a change before any read is announced, once, named as a read names it")
    func changeBeforeRead() {
        let profile = Var(Profile(name: "Ada", visits: 0))
        let model = StartedModel(profile)
        profile[\.visits].value = 1                         // never read through the model
        #expect(model.changes.map(\.property) == ["\\StartedModel.profile"])
        _ = model.profile                                   // reading wires nothing twice
        model.startTracking()                               // nor does calling it again
        profile[\.visits].value = 2
        #expect(model.changes.count == 2)
        let lazy = LazyModel(profile)
        _ = lazy.profile
        profile[\.visits].value = 3
        #expect(lazy.changes.map(\.property) == ["\\LazyModel.profile"])  // the key path's spelling
    }

    @Test("without startTracking(), the first read is where announcing starts: the limit, stated")
    func withoutStart() {
        let profile = Var(Profile(name: "Ada", visits: 0))
        let model = LazyModel(profile)
        profile[\.visits].value = 1
        #expect(model.changes.isEmpty)
        _ = model.profile
        profile[\.visits].value = 2
        #expect(model.changes.count == 1)
    }

    @Test("startTracking() wires a subclass's properties and its superclass's")
    func subclass() {
        let (profile, other) = (Var(Profile(name: "Ada", visits: 0)), Var(Profile(name: "Grace", visits: 0)))
        let model = DerivedModel(profile, other: other)
        profile[\.visits].value = 1
        other[\.visits].value = 1
        #expect(model.changes.map(\.property) == ["\\DerivedModel.profile", "\\DerivedModel.other"])
    }

    @Test("a live handle changed by another process before the owner read it: objectWillChange is sent")
    func remoteChangeBeforeRead() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        let model = AnnouncingContactModel(try await repository.read(Contact.self, id: 2))
        let sends = Recorder<Bool>()
        let sink = model.objectWillChange.sink { sends.append(true) }
        try await psql("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2", database: database)
        #expect(try await eventually { sends.count == 1 })
        sink.cancel()
        repository.close()
    }
}
