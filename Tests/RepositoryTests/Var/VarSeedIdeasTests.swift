import Foundation
import IdentifiedCollections
import Observation
@testable import Repository
import Testing

/// The seed articles' remaining ideas: history, Codable and identity, an owner-announcing
/// property wrapper, fine-grained Observation, and SwiftObserver's transforms.
@Suite("Var: history, Codable, @Tracked, fine-grained Observation, transforms")
struct VarSeedIdeasTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var email: String?
        var visits: Int
    }

    // MARK: - History

    @Test("undo and redo step through recorded changes; a new change clears redo; depth bounds the steps")
    func undoRedo() {
        let profile = Var(Profile(name: "Ada", email: nil, visits: 0))
        let history = History(profile, depth: 2)
        profile[\.name].value = "Ada L."
        profile[\.visits].value = 1
        profile[\.visits].value = 2
        #expect(history.undo().applied)
        #expect(profile.value.visits == 1)
        #expect(history.undo().applied)
        #expect(profile.value == Profile(name: "Ada L.", email: nil, visits: 0))
        #expect(!history.canUndo && !history.undo().applied)  // depth 2: the rename fell off
        #expect(history.redo().applied && profile.value.visits == 1)
        profile[\.email].value = "ada@example.com"
        #expect(!history.canRedo)
    }

    @Test("group makes one step; only the authors asked for are recorded")
    func groupingAndAuthors() {
        let me = Author("me")
        let profile = Var(Profile(name: "Ada", email: nil, visits: 0))
        let history = History(profile, recording: { $0 == me })
        history.group {
            profile[\.name].set("Grace", as: me)
            profile[\.email].set("grace@navy.mil", as: me)
        }
        profile[\.visits].set(7, as: Author("someone else"))   // not mine: not recorded…
        history.undo()                                       // …and not undone
        #expect(profile.value == Profile(name: "Ada", email: nil, visits: 7))
        history.redo()
        #expect(profile.value == Profile(name: "Grace", email: "grace@navy.mil", visits: 7))
    }

    @Test("undo takes back only the step's properties; one changed since by someone else is left and reported")
    func undoAfterOthersChanged() {
        let profile = Var(Profile(name: "Ada", email: nil, visits: 0))
        let history = History(profile)
        profile.update { $0.name = "Ada L."; $0.visits = 1 }
        profile.set(Profile(name: "Ada L.", email: "ada@x", visits: 5), as: .database)  // another process
        let outcome = history.undo()
        #expect(outcome.conflicts == ["visits"])
        #expect(profile.value == Profile(name: "Ada", email: "ada@x", visits: 5))
    }

    @Test("on a live handle, undo writes through and leaves a column another process changed meanwhile")
    func undoOnLiveHandle() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        let ada = try await repository.read(Contact.self, id: 1)
        let history = History(ada)
        ada[\.name].value = "Countess"
        try await ada.save()
        try await psql("UPDATE contacts SET email = 'lovelace@example.com' WHERE id = 1", database: database)
        #expect(try await eventually { ada.value.email == "lovelace@example.com" })
        #expect(history.undo().conflicts.isEmpty)   // the psql change was not mine: not recorded
        try await ada.save()
        let row = try await database.query("SELECT name, email FROM contacts WHERE id = 1")[0]
        #expect(try row.decode(String.self, column: "name") == "Ada")
        #expect(try row.decode(String.self, column: "email") == "lovelace@example.com")
        repository.close()
    }

    // MARK: - Codable and identity

    @Test("a Var encodes and decodes as its value; equality is identity")
    func codableAndIdentity() throws {
        let profile = Var(Profile(name: "Ada", email: nil, visits: 3))
        let data = try JSONEncoder().encode(profile)
        #expect(try JSONDecoder().decode(Profile.self, from: data) == profile.value)
        let decoded = try JSONDecoder().decode(Var<Profile>.self, from: data)
        #expect(decoded.value == profile.value)
        #expect(decoded != profile && profile == profile)
        #expect(Set([profile, profile, decoded]).count == 2)
    }

    // MARK: - @Tracked

    @Observable final class ProfileModel: TrackingOwner {
        @ObservationIgnored @Tracked var profile: Var<Profile>
        var changes: [TrackedChange] = []
        init(_ profile: Var<Profile>) { _profile = Tracked(wrappedValue: profile) }
        func trackedVarDidChange(_ change: TrackedChange) { changes.append(change) }
    }

    final class AnnouncingModel: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var contact: Var<Contact>
        init(_ contact: Var<Contact>) { _contact = Tracked(wrappedValue: contact) }
    }

    @Test("@Tracked tells an @Observable owner of each change, and stops when the owner is gone")
    func trackedObservableOwner() {
        let profile = Var(Profile(name: "Ada", email: nil, visits: 0))
        var model: ProfileModel? = ProfileModel(profile)
        _ = model?.profile                                 // the wrapper learns its owner
        let fired = Recorder<Bool>()
        withObservationTracking { _ = model?.changes } onChange: { fired.append(true) }
        profile[\.visits].value = 1
        #expect(model?.changes.count == 1 && fired.count == 1)
        weak let released = model
        model = nil
        #expect(released == nil)
        profile[\.visits].value = 2                        // nobody to tell, nothing kept alive
    }

    @Test("@Tracked sends objectWillChange for local edits and for another process's change")
    func trackedAnnouncingOwner() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        let model = AnnouncingModel(try await repository.read(Contact.self, id: 2))
        let sends = Recorder<Bool>()
        let sink = model.objectWillChange.sink { sends.append(true) }
        model.contact[\.name].value = "Grace H."
        #expect(sends.count == 1)
        try await model.contact.save()
        try await psql("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2", database: database)
        #expect(try await eventually { sends.count == 2 })
        sink.cancel()
        repository.close()
    }

    // MARK: - Fine-grained Observation

    @Test("reading one property under Observation is not invalidated by another property's change")
    func fineGrainedObservation() {
        let profile = Var(Profile(name: "Ada", email: nil, visits: 0))
        let nameChanged = Recorder<Bool>()
        let emailChanged = Recorder<Bool>()
        withObservationTracking { _ = profile[\.name].value } onChange: { nameChanged.append(true) }
        withObservationTracking { _ = profile[\.email].value } onChange: { emailChanged.append(true) }
        profile[\.email].value = "ada@example.com"
        #expect(nameChanged.count == 0 && emailChanged.count == 1)
        profile[\.name].value = "Ada L."
        #expect(nameChanged.count == 1)
        let book = Var(IdentifiedArrayOf<Contact>(uniqueElements: [Contact(id: 1, name: "Ada"), Contact(id: 2, name: "Grace")]))
        let graceChanged = Recorder<Bool>()
        withObservationTracking { _ = book[id: 2][\.name].value } onChange: { graceChanged.append(true) }
        book[id: 1][\.name].value = "Ada L."
        #expect(graceChanged.count == 0)
        book[id: 2][\.name].value = "Grace H."
        #expect(graceChanged.count == 1)
    }

    // MARK: - Transforms

    @Test("from, notFrom, select and observeOnce, composed with map and filter")
    func transforms() {
        let me = Author("me")
        let counter = Var(0)
        let mine = Recorder<Int>(), others = Recorder<Int>(), sevens = Recorder<Int>(), once = Recorder<Int>(), doubledOdd = Recorder<Int>()
        let subscriptions = [
            counter.from(me).observe { mine.append($0.new) },
            counter.notFrom(me).observe { others.append($0.new) },
            counter.select(7).observe { sevens.append($0.new) },
            counter.from(me).filter { $0 % 2 == 1 }.map { $0 * 2 }.observe { doubledOdd.append($0.new) },
        ]
        counter.observeOnce { once.append($0.new) }
        counter.set(1, as: me)
        counter.set(7, as: Author("you"))
        counter.set(3, as: me)
        counter.value = 7
        #expect(mine.all == [1, 3] && others.all == [7, 7] && sevens.all == [7, 7])
        #expect(once.all == [1] && doubledOdd.all == [2, 6])
        subscriptions.forEach { $0.cancel() }
    }
}
