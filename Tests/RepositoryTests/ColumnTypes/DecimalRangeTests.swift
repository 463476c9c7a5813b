import Foundation
import Repository
import Testing

/// A `numeric` a `Decimal` cannot hold is refused in one line that says why (a stranger's run:
/// `-Infinity` was said to have "0 significant digits", `1e-130` was refused with no reason).
@Suite("Decimal's range")
struct DecimalRangeTests {
    @Test("infinities, exponents past Decimal's and too many digits: each error says which, names the column, one line")
    func refusals() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        let row = try await database.query("""
            SELECT 'Infinity'::numeric AS up, '-Infinity'::numeric AS down, 1e-130::numeric AS tiny, 1e200::numeric AS huge,
                   1234567890123456789012345.6789012345678901234567891::numeric AS long, 1e-20::numeric AS fine
            """)[0]
        let expected = ["up": "Decimal has no infinity", "down": "Decimal has no infinity",
                        "tiny": "a power of ten from -128 to 127", "huge": "a power of ten from -128 to 127",
                        "long": "50 significant digits"]
        for (column, reason) in expected {
            let message = Result { try row.decode(Decimal.self, column: column) }.failure.map { "\($0)" } ?? ""
            #expect(message.contains(reason) && message.contains("\"\(column)\"") && !message.contains("\n") && message.count < 400, "\(column): \(message)")
        }
        #expect(try row.decode(Decimal.self, column: "fine") == Decimal(string: "1e-20"))
    }
}
