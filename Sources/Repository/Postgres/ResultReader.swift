internal import CPostgres

/// Copies a libpq `PGresult` into Swift values.
enum ResultReader {
    static func read(_ raw: OpaquePointer) -> QueryResult {
        let rowCount = Int(PQntuples(raw))
        let columnCount = Int(PQnfields(raw))
        let columns = (0..<columnCount).map { column in
            QueryResult.Column(name: String(cString: PQfname(raw, Int32(column))),
                               type: PostgresType(rawValue: PQftype(raw, Int32(column))))
        }
        var storage: [UInt8] = []
        var cells: [Range<Int>?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(raw, row, column) == 1 {
                    cells.append(nil)
                    continue
                }
                let length = Int(PQgetlength(raw, row, column))
                let start = storage.count
                PQgetvalue(raw, row, column).withMemoryRebound(to: UInt8.self, capacity: length) {
                    storage.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                }
                cells.append(start..<start + length)
            }
        }
        let tag = String(cString: PQcmdStatus(raw))
        return QueryResult(columns: columns, storage: storage, cells: cells, rowCount: rowCount, commandTag: tag,
                           affectedRows: Int(String(cString: PQcmdTuples(raw))) ?? rowCount)
    }

    static func error(_ raw: OpaquePointer, statement: String, redact: (String) -> String) -> PostgresError {
        // A password written in the statement may be quoted back (`at or near "'secret"`).
        let literals = SQLPasswords.literals(in: statement)
        func hidden(_ text: String) -> String {
            literals.reduce(redact(text)) { $0.replacingOccurrences(of: $1, with: "***") }
        }
        func field(_ code: Character) -> String? {
            PQresultErrorField(raw, Int32(code.asciiValue!)).map { hidden(String(cString: $0)) }
        }
        let fallback = Connection.tidy(String(cString: PQresultErrorMessage(raw)))
        var error = PostgresError(.server, field("M") ?? hidden(fallback), statement: statement)
        error.sqlState = field("C")
        error.severity = field("V") ?? field("S")
        error.detail = field("D")
        error.hint = field("H")
        error.position = field("P").flatMap { Int($0) }
        error.schema = field("s")
        error.table = field("t")
        error.column = field("c")
        error.constraint = field("n")
        error.routine = field("R")
        return error
    }
}
