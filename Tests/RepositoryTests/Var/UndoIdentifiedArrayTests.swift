import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// Undo and redo on a `Var` of an `IdentifiedArray` of `Codable` elements (found by a
/// stranger's run: every undo left the value alone and named a conflict nobody caused —
/// `IdentifiedArray` encodes its elements as one value and decodes them as an array, which the
/// exact merge's decoder did not see through).
@Suite("Undo on identified arrays of Codable elements")
struct UndoIdentifiedArrayTests {
    struct Contact: Identifiable, Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var tags: [String]
    }

    @Test("a rename, an append, a removal and a whole-element removal are each undone and redone, with no conflict")
    func undoRedo() {
        let start: IdentifiedArrayOf<Contact> = [Contact(id: 1, name: "a", tags: []), Contact(id: 2, name: "b", tags: ["x"])]
        let list = Var(start)
        let history = History(list)
        let edits: [(String, (Var<IdentifiedArrayOf<Contact>>) -> Void)] = [
            ("rename", { $0[id: 1][\.name].value = "renamed" }),
            ("append", { $0.update { $0.append(Contact(id: 3, name: "c", tags: [])) } }),
            ("remove through [id:]", { $0[id: 2].value = nil }),
            ("remove(id:)", { $0.update { _ = $0.remove(id: 1) } }),
        ]
        for (name, edit) in edits {
            let before = list.value
            edit(list)
            let after = list.value
            #expect(after != before, "\(name)")
            let undone = history.undo()
            #expect(list.value == before && undone.conflicts.isEmpty, "\(name): \(undone)")
            let redone = history.redo()
            #expect(list.value == after && redone.conflicts.isEmpty, "\(name): \(redone)")
        }
    }
}
