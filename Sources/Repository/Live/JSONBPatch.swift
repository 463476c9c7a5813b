/// What an edit changed in a `jsonb` document, at the top level of its object: the members set
/// (their values as the edited record encodes them) and the members removed. A write sends
/// this, not the whole document — `"col" = ("col" - <removed>) || <set>` — so that members the
/// Swift type does not declare (another program's), which the record never holds, stay in the
/// row, also when another process added them meanwhile.
struct JSONBPatch: Equatable {
    /// The members to set, as one JSON object (`{"theme":"dark"}`).
    let set: String
    /// The names of the members to remove.
    let removed: [String]

    /// The patch that turns `base` into `edited`, both the JSON text of a record's property;
    /// nil unless both are JSON objects (the edit then writes the whole document).
    init?(from base: String, to edited: String) {
        guard let before = JSONObjectMembers(base), let after = JSONObjectMembers(edited) else { return nil }
        var earlier: [String: Substring] = [:]
        for member in before.members { earlier[member.name] = member.value }
        let kept = Set(after.members.map(\.name))
        let changed = after.members.filter { earlier[$0.name] != $0.value }
        set = "{" + changed.map { "\($0.quotedName):\($0.value)" }.joined(separator: ",") + "}"
        removed = before.members.map(\.name).filter { !kept.contains($0) }
    }
}
