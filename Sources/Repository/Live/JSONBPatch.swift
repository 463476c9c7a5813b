/// What an edit changed in a `jsonb` document, at the top level of its object: the members set
/// (their values as the edited record encodes them) and the members removed. A write sends
/// this, not the whole document — `"col" = ("col" - <removed>) || <set>` — so that members the
/// Swift type does not declare (another program's), which the record never holds, stay in the
/// row, also when another process added them meanwhile.
///
/// Names and values are compared by their bytes, as `jsonb` compares them (a precomposed `é`
/// and `e` with a combining accent are two names); of a name given twice, the last counts, as
/// in `jsonb`.
struct JSONBPatch: Equatable {
    /// The members to set, as one JSON object (`{"theme":"dark"}`).
    let set: String
    /// The names of the members to remove.
    let removed: [String]

    init(set: String, removed: [String]) {
        (self.set, self.removed) = (set, removed)
    }

    /// The patch that turns `base` into `edited`, both the JSON text of a record's property;
    /// nil unless both are JSON objects (the edit then writes the whole document).
    init?(from base: String, to edited: String) {
        guard let before = JSONObjectMembers(base)?.lastOfEachName, let after = JSONObjectMembers(edited)?.lastOfEachName else { return nil }
        var earlier: [[UInt8]: Substring] = [:]
        for member in before { earlier[Array(member.name.utf8)] = member.value }
        let kept = Set(after.map { Array($0.name.utf8) })
        let changed = after.filter { member in
            guard let value = earlier[Array(member.name.utf8)] else { return true }
            return !value.utf8.elementsEqual(member.value.utf8)
        }
        set = "{" + changed.map { "\($0.quotedName):\($0.value)" }.joined(separator: ",") + "}"
        removed = before.map(\.name).filter { !kept.contains(Array($0.utf8)) }
    }
}
