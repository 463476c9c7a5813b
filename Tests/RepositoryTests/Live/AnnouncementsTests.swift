@testable import Repository
import Testing

@Suite("Announcements: which rows and tables were announced after a read started")
struct AnnouncementsTests {
    typealias Key = LiveRepository.StoreKey

    @Test("a row announced after a read started may have changed for it; one announced before, or another row, not")
    func rowsByNumber() {
        var announced = Announcements()
        announced.record([Key(table: "public.a", key: "1"), Key(table: "public.a", key: "2")], as: 5)
        #expect(announced.mayHaveChanged(Key(table: "public.a", key: "1"), since: 4))
        #expect(!announced.mayHaveChanged(Key(table: "public.a", key: "1"), since: 5))
        #expect(!announced.mayHaveChanged(Key(table: "public.a", key: "3"), since: 4))
        #expect(!announced.mayHaveChanged(Key(table: "public.b", key: "1"), since: 4))
        // An aggregate rooted at the row asks by the same key.
        #expect(announced.mayHaveChanged(Key(table: "public.a", key: "2", isAggregate: true), since: 4))
        #expect(announced.mayHaveChanged(table: "public.a", since: 4))
        #expect(!announced.mayHaveChanged(table: "public.b", since: 0))
    }

    @Test("keys of several tables, interleaved, each land under their own table, the latest number kept")
    func interleavedTables() {
        var announced = Announcements()
        let keys = [("a", "1"), ("b", "1"), ("b", "2"), ("a", "2"), ("a", "1")].map { Key(table: $0.0, key: $0.1) }
        announced.record(keys, as: 3)
        announced.record([Key(table: "b", key: "2")], as: 9)
        for (table, key, latest) in [("a", "1", 3), ("a", "2", 3), ("b", "1", 3), ("b", "2", 9)] as [(String, String, UInt64)] {
            #expect(announced.mayHaveChanged(Key(table: table, key: key), since: latest - 1))
            #expect(!announced.mayHaveChanged(Key(table: table, key: key), since: latest))
        }
        #expect(announced.mayHaveChanged(table: "b", since: 8))
        #expect(!announced.mayHaveChanged(table: "a", since: 3))
    }

    @Test("past the row limit every row is forgotten, and a read started before that counts every row as changed")
    func forgetting() {
        var announced = Announcements()
        let many = (0...Announcements.rowLimit).map { Key(table: "t", key: String($0)) }
        announced.record(many, as: 10)
        announced.record([Key(table: "u", key: "x")], as: 20)  // over the limit: forgets first
        #expect(announced.mayHaveChanged(Key(table: "t", key: "0"), since: 11))  // may: a read before 20 is suspect
        #expect(!announced.mayHaveChanged(Key(table: "t", key: "0"), since: 20))
        #expect(announced.mayHaveChanged(Key(table: "u", key: "x"), since: 19))
        #expect(announced.mayHaveChanged(table: "t", since: 9))  // tables are not forgotten
    }
}
