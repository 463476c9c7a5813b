import Foundation
@testable import Repository
import Testing

/// Children that hold their parent's key and their position as properties of their own — as a
/// child keyed by its parent's column and its own must.
@Suite("Aggregates whose children hold their parent's key")
struct AggregateChildColumnsTests {
    struct Invoice: Record, Equatable {
        static let tableName = "invoices"
        var invoiceNo: Int64
        var title: String
        var id: Int64 { invoiceNo }
    }

    struct Item: Record, Equatable {
        static let tableName = "invoice_items"
        struct Key: Hashable, Codable, Sendable, Comparable {
            var invoiceNo: Int64
            var n: Int32
            static func < (a: Key, b: Key) -> Bool { (a.invoiceNo, a.n) < (b.invoiceNo, b.n) }
        }
        var invoiceNo: Int64
        var n: Int32
        var pos: Int32
        var item: String
        var id: Key { Key(invoiceNo: invoiceNo, n: n) }
    }

    struct Bill: Aggregate {
        static let parentColumn = "invoice_no"
        static let positionColumn = "pos"
        var invoice: Invoice
        var items: [Item]
        var id: Int64 { invoice.invoiceNo }
        init(root: Invoice, children: [Item]) { (invoice, items) = (root, children) }
        var root: Invoice { invoice }
        var children: [Item] { items }
    }

    @Test("appending a child whose key holds the parent's column, and which holds its position: written once each, with the aggregate's values")
    func appendWithParentAndPosition() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE invoices (invoice_no bigint PRIMARY KEY, title text NOT NULL);
                CREATE TABLE invoice_items (invoice_no bigint REFERENCES invoices ON DELETE CASCADE, n integer, pos integer NOT NULL,
                                            item text NOT NULL, PRIMARY KEY (invoice_no, n));
                INSERT INTO invoices VALUES (1, 'tea'), (2, 'coffee');
                INSERT INTO invoice_items VALUES (1, 1, 0, 'pot');
                """)
        }
        try await LiveSchema.enable("invoices", on: database)
        try await LiveSchema.enable("invoice_items", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let bill = try await repository.read(Bill.self, id: 1)
        #expect(bill.value.items.map(\.item) == ["pot"])
        // The position the new child holds is not where it is: where it is wins.
        bill[\.items].value.append(Item(invoiceNo: 1, n: 2, pos: 7, item: "cups"))
        bill[\.invoice][\.title].value = "tea set"
        try await bill.save()
        let rows = try await database.query("SELECT n, pos, item FROM invoice_items WHERE invoice_no = 1 ORDER BY pos")
        #expect(try rows.map { "\(try $0.decode(Int32.self, at: 0)) \(try $0.decode(Int32.self, at: 1)) \(try $0.decode(String.self, at: 2))" }
                == ["1 0 pot", "2 1 cups"])
        #expect(try await eventually { bill.value.items.map(\.pos) == [0, 1] && bill.value.invoice.title == "tea set" })
    }
}
