import Synchronization

/// A row as the logical replication stream delivered it — every column in its binary form,
/// as a read returns it — with the version its transaction gave it, so that a live value one
/// step behind the stream can take it without reading the table again.
///
/// Only a row the stream carries whole comes with a change: not one with a TOASTed value the
/// change left alone (sent as "unchanged"), nor one with a column of a type that has no binary
/// form (sent as text), nor one its transaction changed more than once (its version is not
/// known), nor one of a table with row-level security (which the stream does not apply). Those
/// rows are read, as announced rows are.
@usableFromInline struct StreamedRow: Sendable {
    /// The table's columns, in its order, their types described as reads describe them.
    @usableFromInline let columns: [QueryResult.Column]
    /// Each column's bytes (in the message that carried them); nil for NULL.
    let cells: [ArraySlice<UInt8>?]
    /// The row's version: the id of the transaction that wrote it.
    let version: Int64
    /// Which slot's stream delivered it (see ``ReplicationSlot/epoch``): the order the stream
    /// gives holds within one slot only.
    let epoch: UInt64

    /// Where the stream left the row.
    @usableFromInline var position: StreamedVersion { StreamedVersion(epoch: epoch, version: version) }

    /// A row of these columns and cells, at `version` in the stream of slot `epoch`.
    init(columns: [QueryResult.Column], cells: [ArraySlice<UInt8>?], version: Int64, epoch: UInt64) {
        (self.columns, self.cells, self.version, self.epoch) = (columns, cells, version, epoch)
    }

    /// The row in `cells`, when the stream sent all of it in binary form.
    init?(_ cells: [PgOutputMessage.Cell], of relation: PgOutputMessage.Relation, version: Int64, epoch: UInt64) {
        guard cells.count == relation.resultColumns.count, version != 0, !relation.hasRowSecurity else { return nil }
        var bytes: [ArraySlice<UInt8>?] = []
        bytes.reserveCapacity(cells.count)
        for cell in cells {
            switch cell {
            case .null: bytes.append(nil)
            case .binary(let value): bytes.append(value)
            case .text, .unchanged: return nil
            }
        }
        (self.columns, self.cells, self.version, self.epoch) = (relation.resultColumns, bytes, version, epoch)
    }

    /// The row as a read of it returns it: its columns, then its version (see ``RowVersion``).
    var result: QueryResult { Self.result([self]) }

    /// The rows' positions by their columns, in the order each layout first appears: rows of
    /// one relation share its list of columns, so telling two apart is usually an identity check.
    @usableFromInline static func layoutRuns(_ rows: [StreamedRow]) -> [(columns: [QueryResult.Column], rows: [Int])] {
        var runs: [(columns: [QueryResult.Column], rows: [Int])] = []
        for index in rows.indices {
            let columns = rows[index].columns
            if let run = runs.firstIndex(where: { $0.columns == columns }) {
                runs[run].rows.append(index)
            } else {
                runs.append((columns, [index]))
            }
        }
        return runs
    }

    /// Rows of the same columns as one read returns them, each with its version.
    @usableFromInline static func result(_ rows: some Collection<StreamedRow>) -> QueryResult {
        guard let first = rows.first else { return QueryResult(columns: [], storage: [], cells: [], rowCount: 0, commandTag: "", affectedRows: 0) }
        var storage: [UInt8] = []
        storage.reserveCapacity(rows.reduce(0) { total, row in row.cells.reduce(total + 4) { $0 + ($1?.count ?? 0) } })
        var ranges: [Range<Int>?] = []
        ranges.reserveCapacity(rows.count * (first.cells.count + 1))
        for row in rows {
            for cell in row.cells {
                guard let cell else { ranges.append(nil); continue }
                ranges.append(storage.count..<storage.count + cell.count)
                storage += cell
            }
            let xid = UInt32(truncatingIfNeeded: row.version)
            ranges.append(storage.count..<storage.count + 4)
            storage += (0..<4).reversed().map { UInt8(truncatingIfNeeded: xid >> ($0 * 8)) }
        }
        return QueryResult(columns: first.columns + [QueryResult.Column(name: RowVersion.column, type: .xid)], storage: storage,
                           cells: ranges, rowCount: rows.count, commandTag: "", affectedRows: rows.count)
    }
}

extension ReplicationSlot {
    /// A number no other slot this process follows has had: a new slot's stream starts a new
    /// order (see ``StreamedRow/epoch``).
    static func nextEpoch() -> UInt64 { epochs.add(1, ordering: .relaxed).newValue }

    private static let epochs = Atomic<UInt64>(0)
}
