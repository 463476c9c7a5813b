extension RecordTable {
    /// The conditional `UPDATE … RETURNING *` of a write (see ``write(_:id:)``): `properties` of
    /// `value`, on the row `id` at `version`. Given the `base` the write was edited from, a
    /// `jsonb` column whose value is a JSON object in both is written as a ``JSONBPatch``: only
    /// the members the edit changed, so that members the record's type does not declare stay —
    /// where the row holds an object; anything else there is replaced by the edited document.
    /// With no properties it sets ``touchColumn`` to itself: the row gets a new version all the same.
    func updateStatement(_ value: R, base: R? = nil, id: R.ID, properties: Set<String>, expectedVersion version: Int64) throws -> (String, [SQLValue]) {
        let encoded = try RecordColumns(value)
        let columns = encoded.values.filter { properties.contains($0.property) }
        let patches = try self.patches(of: columns, emptyArrays: encoded.emptyArrays, base: base)
        let keyValues = try key.values(of: id)
        let shape = UpdateStatements.Shape(columns: columns.map(\.column), emptyArrays: columns.map { encoded.emptyArrays.contains($0.column) },
                                           patched: patches.map { $0 != nil })
        let sql = try updates.sql(for: shape) { try update(shape, firstValue: keyValues.count + 2) }
        var values = keyValues + [.text(String(version))]
        for (column, patch) in zip(columns, patches) {
            guard let patch else {
                values.append(column.value)
                continue
            }
            values += [.text(patch.set), .text(ArrayLiteral.string(from: patch.removed.map(SQLValue.text))), column.value]
        }
        return (sql, values)
    }

    /// For each of `columns`, its patch from `base` when it is a `jsonb` column holding an
    /// object in both (nil: the column is written whole). An empty array of structs, which
    /// encodes as the array literal `{}` (see ``RecordColumns/emptyArrays``), is no object.
    private func patches(of columns: [(property: String, column: String, value: SQLValue)], emptyArrays: Set<String>, base: R?) throws -> [JSONBPatch?] {
        let patchable = columns.map { jsonColumns[$0.column] == "jsonb" && !emptyArrays.contains($0.column) }
        guard let base, patchable.contains(true) else { return columns.map { _ in nil } }
        let original = try RecordColumns(base)
        let before = Dictionary(original.values.map { ($0.column, $0.value) }, uniquingKeysWith: { first, _ in first })
        return columns.indices.map { index in
            let column = columns[index].column
            guard patchable[index], !original.emptyArrays.contains(column), case .text(let edited) = columns[index].value,
                  case .text(let earlier)? = before[column] else { return nil }
            return JSONBPatch(from: earlier, to: edited)
        }
    }

    /// The text of an `UPDATE` of `shape`'s columns, whose values are parameters from `firstValue`
    /// on: one each, three for a patched column (its members to set, the names to remove, and
    /// the whole document, for a row that holds no object there). The column is read as `jsonb`
    /// and what is written is cast back: a column altered to `json` or `text` meanwhile still
    /// takes the write.
    private func update(_ shape: UpdateStatements.Shape, firstValue first: Int) throws -> String {
        var assignments: [String] = []
        var number = first
        for index in shape.columns.indices {
            let column = SQLIdentifier.quoted(shape.columns[index])
            if shape.patched[index] {
                assignments.append("\(column) = CASE WHEN jsonb_typeof(\(column)::jsonb) = 'object' "
                                   + "THEN (\(column)::jsonb - $\(number + 1)::text[]) || $\(number)::jsonb ELSE $\(number + 2)::jsonb END")
                number += 3
            } else {
                assignments.append("\(column) = \(parameter(number, for: shape.columns[index], emptyArray: shape.emptyArrays[index]))")
                number += 1
            }
        }
        if assignments.isEmpty {
            guard let touchColumn else {
                throw PostgresError(.invalidStatement, "\(shownName) has no column a write may set to itself (all are generated or identity columns)")
            }
            assignments = ["\(SQLIdentifier.quoted(touchColumn)) = \(SQLIdentifier.quoted(touchColumn))"]
        }
        return "UPDATE \(quoted) SET \(assignments.joined(separator: ", ")) "
            + "WHERE \(key.equals(parameter: 1)) AND \(RowVersion.isAt(parameter: first - 1)) RETURNING \(RowVersion.rowAndVersion)"
    }
}
