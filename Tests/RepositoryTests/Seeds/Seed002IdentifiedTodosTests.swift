import Foundation
import IdentifiedCollections
import Observation
import Repository
import Testing

/// Seed 002: the Point-Free IdentifiedCollections README (`../shared/seeds/002_*`), its todos.
/// `class TodosViewModel: ObservableObject` with `@Published var todos` is a `ChangeAnnouncing`
/// class with `@Tracked var todos: Var<…>`; a SwiftUI `List` is a render read under
/// `withObservationTracking`; `apiClient.updateTodo` is a fake that lets the test change the
/// list while the call is away.
///
/// Not run: `List(self.viewModel.todos.enumerated(), id: \.element.id)`, which the README says
/// does not compile (its `Array(…enumerated())` fix is a SwiftUI view, run here as index rows).
@Suite("Seed 002: IdentifiedCollections' todos")
struct Seed002IdentifiedTodosTests {
    struct Todo: Identifiable, Equatable, Sendable {
        var description = ""
        let id: UUID
        var isComplete = false
    }

    /// `apiClient.updateTodo`: saves a todo and returns it as the backend has it; `meanwhile`
    /// runs while the request is away (another edit of the list).
    struct APIClient: Sendable {
        var meanwhile: @Sendable () -> Void = {}
        func updateTodo(_ todo: Todo) async throws -> Todo {
            meanwhile()
            var saved = todo
            saved.description += " (saved)"
            return saved
        }
    }

    /// `class TodosViewModel: ObservableObject { @Published var todos: [Todo] = [] }`, with each
    /// of the README's `todoCheckboxToggled` versions over an array.
    final class TodosViewModel: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var todos: Var<[Todo]>
        let apiClient: APIClient
        init(_ todos: Var<[Todo]>, apiClient: APIClient = APIClient()) {
            _todos = Tracked(wrappedValue: todos)
            self.apiClient = apiClient
            startTracking()
        }

        /// Searching the array for the id.
        func todoCheckboxToggled(at id: Todo.ID) {
            todos.update { todos in
                guard let index = todos.firstIndex(where: { $0.id == id }) else { return }
                todos[index].isComplete.toggle()
            }
        }

        /// By index, through an index reference.
        func todoCheckboxToggled(at index: Int) {
            todos[index][\.isComplete].value.toggle()
        }

        /// By index across an await: "❌ Could update the wrong todo, or crash!"
        func todoCheckboxToggledAcrossAwait(at index: Int) async throws {
            todos[index][\.isComplete].value.toggle()
            todos[index].value = try await apiClient.updateTodo(todos[index].value)
        }

        /// 1️⃣–4️⃣: the id taken before the await, the index found again after it.
        func todoCheckboxToggledFindingAgain(at index: Int) async throws {
            todos[index][\.isComplete].value.toggle()
            let id = todos[index].value.id
            let updatedTodo = try await apiClient.updateTodo(todos[index].value)
            let updatedIndex = try #require(todos.value.firstIndex(where: { $0.id == id }))
            todos[updatedIndex].value = updatedTodo
        }
    }

    /// The same view model over `IdentifiedArrayOf<Todo>`.
    final class IdentifiedTodosViewModel: ChangeAnnouncing {
        let objectWillChange = ChangeSignal()
        @Tracked var todos: Var<IdentifiedArrayOf<Todo>>
        let apiClient: APIClient
        init(_ todos: Var<IdentifiedArrayOf<Todo>>, apiClient: APIClient = APIClient()) {
            _todos = Tracked(wrappedValue: todos)
            self.apiClient = apiClient
            startTracking()
        }

        func todoCheckboxToggled(at id: Todo.ID) async throws {
            todos.update { $0[id: id]?.isComplete.toggle() }
            // 1️⃣ Update todo on backend and mutate it in the todos identified array.
            todos[id: id].value = try await apiClient.updateTodo(try #require(todos[id: id].value))
        }
    }

    static let lettuce = Todo(description: "Buy lettuce", id: UUID())
    static let mom = Todo(description: "Call mom", id: UUID())
    static let dog = Todo(description: "Walk the dog", id: UUID())
    static var three: [Todo] { [lettuce, mom, dog] }

    @Test("a todos view model announces changes of its todos, as @Published does")
    func viewModelAnnounces() {
        let viewModel = TodosViewModel(Var(Self.three))
        let willChange = Recorder<Bool>()
        let sink = viewModel.objectWillChange.sink { willChange.append(true) }
        viewModel.todos.value.append(Todo(description: "Pay rent", id: UUID()))
        viewModel.todoCheckboxToggled(at: Self.mom.id)
        #expect(willChange.count == 2)
        sink.cancel()
    }

    /// `List(self.viewModel.todos) { todo in … }`: the list renders again when the todos change.
    @Test("the list of todos renders again when a todo changes")
    func listRendersAgain() {
        let viewModel = TodosViewModel(Var(Self.three))
        let rendered = Recorder<[String]>()
        func render() {
            withObservationTracking {
                rendered.append(viewModel.todos.value.map { "\($0.isComplete ? "☑" : "☐") \($0.description)" })
            } onChange: { rendered.append(["invalidated"]) }
        }
        render()
        viewModel.todoCheckboxToggled(at: Self.mom.id)
        render()
        #expect(rendered.all == [["☐ Buy lettuce", "☐ Call mom", "☐ Walk the dog"], ["invalidated"],
                                 ["☐ Buy lettuce", "☑ Call mom", "☐ Walk the dog"]])
    }

    @Test("toggled by id, searching the array; an unknown id changes nothing")
    func toggledByIDSearching() {
        let viewModel = TodosViewModel(Var(Self.three))
        viewModel.todoCheckboxToggled(at: Self.mom.id)
        viewModel.todoCheckboxToggled(at: UUID())
        #expect(viewModel.todos.value.map(\.isComplete) == [false, true, false])
    }

    /// `List(Array(self.viewModel.todos.enumerated()), id: \.element.id) { index, todo in … }`
    /// with `todoCheckboxToggled(at index:)`: rows hand their index back.
    @Test("toggled by the index a row was given")
    func toggledByIndex() {
        let viewModel = TodosViewModel(Var(Self.three))
        let rows = Array(viewModel.todos.value.enumerated())
        let (index, todo) = rows[2]
        viewModel.todoCheckboxToggled(at: index)
        #expect(viewModel.todos.value[index] == Todo(description: todo.description, id: todo.id, isComplete: true))
    }

    @Test("❌ by index across an await: a removal meanwhile makes the write land on the wrong todo")
    func indexAcrossAwaitUpdatesTheWrongTodo() async throws {
        let todos = Var(Self.three)
        let viewModel = TodosViewModel(todos, apiClient: APIClient { todos.update { _ = $0.removeFirst() } })
        try await viewModel.todoCheckboxToggledAcrossAwait(at: 1)
        // "Call mom" moved to 0 and stays unsaved; its saved copy overwrote "Walk the dog".
        #expect(todos.value.map(\.description) == ["Call mom", "Call mom (saved)"])
        #expect(todos.value.map(\.id) == [Self.mom.id, Self.mom.id])
    }

    @Test("1️⃣–4️⃣ the id kept across the await finds the todo again after a removal")
    func idKeptAcrossAwait() async throws {
        let todos = Var(Self.three)
        let viewModel = TodosViewModel(todos, apiClient: APIClient { todos.update { _ = $0.removeFirst() } })
        try await viewModel.todoCheckboxToggledFindingAgain(at: 1)
        #expect(todos.value == [Todo(description: "Call mom (saved)", id: Self.mom.id, isComplete: true), Self.dog])
    }

    @Test("IdentifiedArray: toggled and updated by id across an await, whatever moved meanwhile")
    func identifiedAcrossAwait() async throws {
        let todos = Var(IdentifiedArray(uniqueElements: Self.three))
        let viewModel = IdentifiedTodosViewModel(todos, apiClient: APIClient {
            todos.update { todos in
                todos.remove(id: Self.lettuce.id)
                todos.reverse()
            }
        })
        let willChange = Recorder<Bool>()
        let sink = viewModel.objectWillChange.sink { willChange.append(true) }
        try await viewModel.todoCheckboxToggled(at: Self.mom.id)
        #expect(Array(todos.value) == [Self.dog, Todo(description: "Call mom (saved)", id: Self.mom.id, isComplete: true)])
        #expect(willChange.count == 3)                      // toggle, the meanwhile edit, the saved todo
        sink.cancel()
    }

    /// `List(self.viewModel.todos) { todo in … }` over the identified array, each row reading
    /// its todo by id: a row renders again only when its own todo changes.
    @Test("rows read by id: toggling one todo invalidates its row only")
    func rowsByID() {
        let viewModel = IdentifiedTodosViewModel(Var(IdentifiedArray(uniqueElements: Self.three)))
        let invalidated = Recorder<String>()
        for todo in viewModel.todos.value {
            withObservationTracking { _ = viewModel.todos[id: todo.id].value } onChange: { invalidated.append(todo.description) }
        }
        viewModel.todos.update { $0[id: Self.dog.id]?.isComplete.toggle() }
        viewModel.todos.update { $0.move(fromOffsets: [0], toOffset: 3) }   // moving changes no row
        #expect(invalidated.all == ["Walk the dog"])
    }

    /// `var numbers = IdentifiedArray(id: \Int.self)`: elements identified by a key path.
    @Test("an IdentifiedArray identified by a key path, addressed by id")
    func identifiedByKeyPath() {
        let numbers = Var(IdentifiedArray(id: \Int.self))
        numbers.value.append(3)
        numbers.value.append(5)
        #expect(numbers[id: 5].value == 5)
        numbers[id: 3].value = nil
        #expect(Array(numbers.value) == [5])
        #expect(numbers[id: 3].value == nil)
    }
}
