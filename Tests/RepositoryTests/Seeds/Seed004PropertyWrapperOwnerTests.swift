import Foundation
import Repository
import Testing

/// Seed 004: "@Published-like abilities for custom property wrappers" (`../shared/seeds/004_*`).
/// `ObservableObject` with `objectWillChange` is ``ChangeAnnouncing`` with a ``ChangeSignal``
/// (Combine is not on Linux); `@Published`, `@MyPublished`, `@PublishedObject`, `@AppStorage` and
/// `@CloudStorage` are `@Tracked` over a `Var`; a `sink` on `$name` is an observation of the
/// `Var`. Announcements come after the change (the article's come before it, in `willSet`).
///
/// Not run: the subscript signatures quoted from the proposal and Stack Overflow (``Tracked``
/// implements the second); `struct Demo { @State var name }` with its expansion and the
/// `_name` redeclaration error (SwiftUI, and a compile error); and the implementations of
/// `MyPublished`, `PublishedObject` and `CloudStorage` (the article's wrappers; their uses run).
@Suite("Seed 004: property wrappers that reach their enclosing instance")
struct Seed004PropertyWrapperOwnerTests {
    /// `class Weather { @Published var temperature: Double }`, with no owner to announce to.
    final class Weather {
        let temperature: Var<Double>
        init(temperature: Double) { self.temperature = Var(temperature) }
    }

    @Test("weather.$temperature.sink prints the current temperature, then the new one")
    func temperatureSink() {
        let weather = Weather(temperature: 20)
        let printed = Recorder<String>()
        let cancellable = weather.temperature.observe(initial: true) { printed.append("Temperature now: \($0.new)") }
        weather.temperature.value = 25
        #expect(printed.all == ["Temperature now: 20.0", "Temperature now: 25.0"])
        cancellable.cancel()
    }

    /// `class Weather: ObservableObject { @Published var temperature: Double }`.
    final class AnnouncingWeather: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var temperature: Var<Double>
        init(temperature: Double) {
            _temperature = Tracked(wrappedValue: Var(temperature))
            startTracking()
        }
    }

    /// The same `Weather` announcing by hand: `willSet { self.objectWillChange.send() }`.
    final class HandWrittenWeather: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        var temperature: Double {
            willSet { objectWillChange.send() }
        }
        init(temperature: Double) { self.temperature = temperature }
    }

    @Test("weather.objectWillChange.sink hears \"weather will change\", from the wrapper as from a hand-written willSet")
    func weatherWillChange() {
        let weather = AnnouncingWeather(temperature: 20)
        let handWritten = HandWrittenWeather(temperature: 20)
        let printed = Recorder<String>()
        let cancellables = [weather.objectWillChange.sink { printed.append("weather will change") },
                            handWritten.objectWillChange.sink { printed.append("hand-written weather will change") }]
        weather.temperature.value = 25
        handWritten.temperature = 25
        #expect(printed.all == ["weather will change", "hand-written weather will change"])
        weather.temperature = Var(30)                      // assigning the property itself announces too
        weather.temperature.value = 31                     // …and the new Var is the one heard
        #expect(printed.all.count == 4)
        cancellables.forEach { $0.cancel() }
    }

    /// `class Test: ObservableObject { @Published var name = "fat" }` as the compiler translates it:
    /// a getter and setter through the wrapper's `_enclosingInstance` subscript, written by hand.
    final class Expanded: TrackingOwner {
        let changes = Recorder<TrackedChange>()
        private var _name: Tracked<String>
        var name: Var<String> {
            get { Tracked<String>[_enclosingInstance: self, wrapped: \Expanded.name, storage: \Expanded._name] }
            set { Tracked<String>[_enclosingInstance: self, wrapped: \Expanded.name, storage: \Expanded._name] = newValue }
        }
        init(_ name: Var<String>) { _name = Tracked(wrappedValue: name) }
        func trackedVarDidChange(_ change: TrackedChange) { changes.append(change) }
    }

    @Test("the translated getter hands the wrapper its enclosing instance; only then are changes announced")
    func expandedEnclosingInstance() {
        let fat = Var("fat")
        let test = Expanded(fat)
        fat.value = "not yet"                               // nothing has called the subscript
        #expect(test.changes.all.isEmpty)
        #expect(test.name.value == "not yet")               // the getter: the owner is learnt
        fat.value = "bob"
        test.name = Var("alice")                            // the setter announces the new Var
        #expect(test.changes.all.map(\.property) == ["\\Expanded.name", "\\Expanded.name"])
    }

    /// `class T: ObservableObject { @MyPublished var name = "fat" }`.
    final class T: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var name = Var("fat")
        init() { startTracking() }
    }

    @Test("@MyPublished: \"name will get new value fat\", \"object will changed\", \"name will get new value bob\"")
    func myPublished() {
        let object = T()
        let printed = Recorder<String>()
        let c1 = object.objectWillChange.sink { printed.append("object will changed") }
        let c2 = object.name.observe(initial: true) { printed.append("name will get new value \($0.new)") }
        object.name.value = "bob"
        #expect(printed.all == ["name will get new value fat", "object will changed", "name will get new value bob"])
        c1.cancel()
        c2.cancel()
    }

    /// `@Published var ref = RefObject()`: changing `test.ref.count` announces nothing, which is
    /// why the article writes `@PublishedObject`. Over a struct in a `Var`, the change is announced.
    final class RefTest: ChangeAnnouncing {
        struct RefObject: Sendable { var count = 0 }
        let objectWillChange = ChangeSignal()
        @Tracked var ref = Var(RefObject())
        init() { startTracking() }
    }

    @Test("a change inside the wrapped value reaches objectWillChange (@PublishedObject's purpose)")
    func changeInsideWrappedValue() {
        let test = RefTest()
        let printed = Recorder<String>()
        let cancellable = test.objectWillChange.sink { printed.append("object will change") }
        test.ref[\.count].value = 100
        #expect(printed.all == ["object will change"] && test.ref.value.count == 100)
        cancellable.cancel()
    }

    /// `class Store: ObservableObject { @PublishedObject var event = Event(context:) }` and the
    /// `DemoView` whose "Now" button sets `store.event.timestamp = .now`; the Core Data object is a struct.
    final class Store: ChangeAnnouncing {
        struct Event: Sendable { var timestamp: Date? }
        let objectWillChange = ChangeSignal()
        @Tracked var event = Var(Event())
        init() {
            event[\.timestamp].value = Date().addingTimeInterval(-1000)
            startTracking()
        }
    }

    @Test("@PublishedObject's store: the view renders again when the button sets the timestamp")
    func publishedObjectStore() throws {
        let store = Store()
        let invalidated = Recorder<Bool>()                  // SwiftUI renders again after objectWillChange
        let view = store.objectWillChange.sink { invalidated.append(true) }
        let shown = try #require(store.event.value.timestamp)   // Text(store.event.timestamp)
        let now = Date()
        store.event[\.timestamp].value = now                // Button("Now")
        #expect(invalidated.count == 1 && store.event.value.timestamp == now && shown < now.addingTimeInterval(-999))
        view.cancel()
    }

    // MARK: - @AppStorage and @CloudStorage

    /// The settings kept elsewhere, changed by others: a row of a `settings` table.
    struct CloudSettings: Record, Equatable {
        static let tableName = "settings"
        var id: Int64
        var readyForAction: Bool
        var speed: Double
    }

    /// `class Settings: ObservableObject` with `@AppStorage("name")`, `@AppStorage("age")`,
    /// `@CloudStorage("readyForAction")` and `@CloudStorage("speed")`: local `Var`s, and
    /// references into a live row that another process changes.
    final class Settings: TrackingOwner, ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        let changes = Recorder<TrackedChange>()
        @Tracked var name = Var("fat")
        @Tracked var age = Var(5)
        @Tracked var readyForAction: Var<Bool>
        @Tracked var speed: Var<Double>
        init(cloud: Var<CloudSettings>) {
            _readyForAction = Tracked(wrappedValue: cloud[\.readyForAction])
            _speed = Tracked(wrappedValue: cloud[\.speed])
            startTracking()
        }
        func trackedVarDidChange(_ change: TrackedChange) { changes.append(change) }
    }

    @Test("settings: edits through the form and another process's change of the cloud values are announced",
          .timeLimit(.minutes(5)))
    func appAndCloudStorage() async throws {
        let database = try await TestServer.makeDatabase()
        try await migrateProject(database)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE settings (id bigint PRIMARY KEY, ready_for_action boolean NOT NULL, speed double precision NOT NULL);
                SELECT live.enable_change_notifications('settings');
                INSERT INTO settings VALUES (1, false, 0);
                """)
        }
        let repository = LiveRepository(database)
        let settings = Settings(cloud: try await repository.read(CloudSettings.self, id: 1))
        let willChange = Recorder<Bool>()
        let view = settings.objectWillChange.sink { willChange.append(true) }
        settings.name.value = "fatbobman"                   // TextField("Name", text: $settings.name)
        settings.age.value = 12
        settings.readyForAction.value = true                // Toggle("Ready", isOn: $settings.readyForAction)
        try await settings.readyForAction.save()
        #expect(try await database.query("SELECT ready_for_action FROM settings")[0].decode(Bool.self, at: 0))
        try await psql("UPDATE settings SET speed = 2.5 WHERE id = 1", database: database)
        #expect(try await eventually { settings.speed.value == 2.5 })
        #expect(settings.changes.all.map(\.property) == ["\\Settings.name", "\\Settings.age", "\\Settings.readyForAction", "\\Settings.speed"])
        #expect(settings.changes.all.last?.author == .database && willChange.count == 4)
        view.cancel()
        repository.close()
    }
}
