import PropertyBased
@testable import Repository
import Testing

/// ``ColumnLayout`` finds a property's column by a scan from where the last one was found,
/// and wide results through a dictionary: whatever the order properties are asked in, it must
/// answer what a plain search says — the first column with the property's name, or none.
@Suite("Column layout")
struct ColumnLayoutTests {
    /// Property names, some sharing a column name (`userID`, `userId`) and some with none.
    static let keys = ["id", "userID", "userId", "firstName", "n", "missing", "zipCode2", "name"]

    /// A one-row result of text cells under `names`.
    static func result(_ names: [String]) -> QueryResult {
        QueryResult(columns: names.map { QueryResult.Column(name: $0, type: .text) }, storage: [],
                    cells: names.map { _ in 0..<0 }, rowCount: 1, commandTag: "SELECT 1", affectedRows: 1)
    }

    @Test("any order of lookups over narrow and wide results, with repeated and missing columns, agrees with a plain search", .shrinking)
    func agreesWithSearch() async {
        let columnNames = ["id", "user_id", "first_name", "n", "zip_code2", "name", "other"]
        // Column lists of 0 to 40 (wider than the 16 a scan serves), drawn with repeats.
        let columns = Gen.int(in: 0...(columnNames.count - 1)).array(of: 0...40)
        let lookups = Gen.int(in: 0...(Self.keys.count - 1)).array(of: 1...60)
        await propertyCheck(count: 1000, input: columns, lookups) { columns, lookups in
            let names = columns.map { columnNames[$0] }
            let layout = ColumnLayout(result: Self.result(names), naming: .snakeCase)
            for key in lookups.map({ Self.keys[$0] }) {
                let expected = names.firstIndex(of: ColumnNaming.snakeCased(key))
                #expect(layout.columnIndex(for: key) == expected, "\(key) in \(names)")
            }
        }
    }

    @Test("rows asked in the same order each time find every property, with a custom naming")
    func repeatedRows() {
        let layout = ColumnLayout(result: Self.result(["ID", "NAME", "N"]), naming: ColumnNaming { $0.uppercased() })
        for _ in 0..<3 {
            #expect(layout.columnIndex(for: "id") == 0)
            #expect(layout.columnIndex(for: "name") == 1)
            #expect(layout.columnIndex(for: "missing") == nil)
            #expect(layout.columnIndex(for: "n") == 2)
        }
    }

    struct Contact: Decodable, Equatable {
        var name: String
        var nickName: String?
        var phoneNumber: String?
        var faxNumber: String?
    }

    @Test("optional properties, each asked for several times by decodeIfPresent: present, NULL and missing columns")
    func optionals() throws {
        let storage = Array("aliceal".utf8)
        let result = QueryResult(columns: ["phone_number", "name", "nick_name"].map { QueryResult.Column(name: $0, type: .text) },
                                 storage: storage, cells: [nil, 0..<5, 5..<7, 0..<5, 0..<5, nil],
                                 rowCount: 2, commandTag: "SELECT 2", affectedRows: 2)
        #expect(try result.decode(Contact.self) == [Contact(name: "alice", nickName: "al"), Contact(name: "alice", phoneNumber: "alice")])
    }

    @Test("snake_case names are kept for the names seen, up to a bound, and converted the same either way")
    func cachedNames() {
        let cache = SnakeCasedNames()
        for index in 0..<(SnakeCasedNames.capacity + 10) {
            #expect(cache.name(of: "propertyNumber\(index)") == "property_number\(index)")
        }
        #expect(cache.count == SnakeCasedNames.capacity)
        // Beyond the bound, names are converted without being kept, still exactly.
        #expect(cache.name(of: "htmlURL2") == "html_url2")
        #expect(cache.name(of: "htmlURL2") == ColumnNaming.snakeCased("htmlURL2"))
    }
}
