/// A live query's condition ready to evaluate on a row in this process, with SQL's three-valued
/// logic — or nil from ``compile(_:parameters:columns:)`` when the server must decide.
@usableFromInline
package struct CompiledCondition: Sendable {
    /// A column of the query's table, as conditions see it.
    @usableFromInline package struct Column: Sendable {
        let kind: ConditionValue.Kind?
        /// Whether text compares in byte order (`C` or `POSIX` collation): `<` may be evaluated.
        let bytewiseOrder: Bool

        /// A column whose values are compared as `kind` (nil: only `IS NULL` is evaluated here).
        package init(kind: ConditionValue.Kind?, bytewiseOrder: Bool) {
            (self.kind, self.bytewiseOrder) = (kind, bytewiseOrder)
        }
    }

    indirect enum Node: Sendable {
        case and([Node])
        case or([Node])
        case not(Node)
        case compare(Operand, ComparisonOperator, Operand)
        case isNull(Operand, negated: Bool)
        case inList(Operand, [Operand], negated: Bool)
        case between(Operand, Operand, Operand, negated: Bool)
        case likePrefix(Operand, [UInt8], negated: Bool)
        case value(Operand)
    }

    enum Operand: Sendable {
        case column(String)
        /// A constant; nil for NULL.
        case constant(ConditionValue?)
    }

    let root: Node
    /// The columns it reads.
    @usableFromInline let columns: Set<String>
    /// An equality every matching row satisfies — `column = constant`, or `column IN (…)`, as a
    /// term of the top-level AND — for indexing the query by it.
    let equality: (column: String, values: [ConditionValue])?

    /// Compiles `condition` over a table with `columns`; nil when any part is not evaluated here.
    package static func compile(_ condition: String, parameters: [SQLValue], columns: [String: Column]) -> CompiledCondition? {
        guard let node = ConditionParser.parse(condition) else { return nil }
        var compiler = ConditionCompiler(parameters: parameters, columns: columns)
        guard let root = compiler.node(node) else { return nil }
        return CompiledCondition(root: root, columns: compiler.used, equality: Self.equality(in: root))
    }

    /// Whether the row whose column values `value` gives (nil for NULL) matches: `(condition) IS TRUE`.
    @usableFromInline func matches(_ value: (String) -> ConditionValue?) -> Bool {
        Self.evaluate(root, value) == true
    }

    private static func evaluate(_ node: Node, _ value: (String) -> ConditionValue?) -> Bool? {
        switch node {
        case .and(let terms):
            var result: Bool? = true
            for term in terms {
                switch evaluate(term, value) {
                case false?: return false
                case nil: result = nil
                case true?: continue
                }
            }
            return result
        case .or(let terms):
            var result: Bool? = false
            for term in terms {
                switch evaluate(term, value) {
                case true?: return true
                case nil: result = nil
                case false?: continue
                }
            }
            return result
        case .not(let inner):
            return evaluate(inner, value).map { !$0 }
        case .compare(let a, let op, let b):
            guard let x = resolve(a, value), let y = resolve(b, value), let order = ConditionValue.compare(x, y) else { return nil }
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .isNull(let operand, let negated):
            return (resolve(operand, value) == nil) != negated
        case .inList(let operand, let list, let negated):
            guard let x = resolve(operand, value) else { return nil }
            var sawNull = false
            for element in list {
                guard let y = resolve(element, value) else { sawNull = true; continue }
                if ConditionValue.compare(x, y) == 0 { return !negated }
            }
            return sawNull ? nil : negated
        case .between(let operand, let low, let high, let negated):
            let lower = evaluate(.compare(operand, .greaterOrEqual, low), value)
            let upper = evaluate(.compare(operand, .lessOrEqual, high), value)
            let both: Bool? = lower == false || upper == false ? false : lower == nil || upper == nil ? nil : true
            return negated ? both.map { !$0 } : both
        case .likePrefix(let operand, let prefix, let negated):
            guard case .text(let bytes)? = resolve(operand, value) else { return nil }
            return bytes.starts(with: prefix) != negated
        case .value(let operand):
            switch resolve(operand, value) {
            case .boolean(let flag)?: return flag
            default: return nil
            }
        }
    }

    private static func resolve(_ operand: Operand, _ value: (String) -> ConditionValue?) -> ConditionValue? {
        switch operand {
        case .column(let name): value(name)
        case .constant(let constant): constant
        }
    }

    /// The top-level `column = constant` (or `IN`) term, if any.
    private static func equality(in root: Node) -> (column: String, values: [ConditionValue])? {
        let terms: [Node] = if case .and(let terms) = root { terms } else { [root] }
        for term in terms {
            switch term {
            case .compare(.column(let column), .equal, .constant(let constant?)), .compare(.constant(let constant?), .equal, .column(let column)):
                if let key = constant.indexKey { return (column, [key]) }
            case .inList(.column(let column), let list, negated: false):
                let keys = list.compactMap { operand -> ConditionValue? in
                    if case .constant(let constant?) = operand { return constant.indexKey }
                    return nil
                }
                // Every element a constant to index by (NULLs match nothing).
                if keys.count == list.filter({ if case .constant(nil) = $0 { false } else { true } }).count, !keys.isEmpty { return (column, keys) }
            default: continue
            }
        }
        return nil
    }
}
