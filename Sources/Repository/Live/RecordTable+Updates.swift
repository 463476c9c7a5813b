extension RecordTable {
    /// The conditional `UPDATE … RETURNING *` of a write (see ``write(_:id:)``): `properties` of
    /// `value`, on the row `id` at `version`. Given the `base` the write was edited from, a
    /// `jsonb` column whose value is a JSON object in both is written as a ``JSONBPatch``: only
    /// the members the edit changed, so that members the record's type does not declare stay.
    /// With no properties it sets ``touchColumn`` to itself: the row gets a new version all the same.
    func updateStatement(_ value: R, base: R? = nil, id: R.ID, properties: Set<String>, expectedVersion version: Int64) throws -> (String, [SQLValue]) {
        let encoded = try RecordColumns(value)
        let columns = encoded.values.filter { properties.contains($0.property) }
        let patches = try self.patches(of: columns, base: base)
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
            values += [.text(patch.set), .text(ArrayLiteral.string(from: patch.removed.map(SQLValue.text)))]
        }
        return (sql, values)
    }

    /// For each of `columns`, its patch from `base` when it is a `jsonb` column holding an
    /// object in both (nil: the column is written whole).
    private func patches(of columns: [(property: String, column: String, value: SQLValue)], base: R?) throws -> [JSONBPatch?] {
        let patchable = columns.map { jsonColumns[$0.column] == "jsonb" }
        guard let base, patchable.contains(true) else { return columns.map { _ in nil } }
        let before = Dictionary(try RecordColumns(base).values.map { ($0.column, $0.value) }, uniquingKeysWith: { first, _ in first })
        return columns.indices.map { index in
            guard patchable[index], case .text(let edited) = columns[index].value, case .text(let original)? = before[columns[index].column] else { return nil }
            return JSONBPatch(from: original, to: edited)
        }
    }

    /// The text of an `UPDATE` of `shape`'s columns, whose values are parameters from `firstValue`
    /// on: one each, two for a patched column (its members to set, then the names to remove).
    private func update(_ shape: UpdateStatements.Shape, firstValue first: Int) throws -> String {
        var assignments: [String] = []
        var number = first
        for index in shape.columns.indices {
            let column = SQLIdentifier.quoted(shape.columns[index])
            if shape.patched[index] {
                assignments.append("\(column) = (\(column) - $\(number + 1)::text[]) || $\(number)::jsonb")
                number += 2
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
