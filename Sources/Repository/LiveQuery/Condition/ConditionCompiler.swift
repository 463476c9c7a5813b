/// Turns a parsed condition into a ``CompiledCondition`` over a table's columns: each constant
/// (a parameter's value, a literal) read as the kind of the column it is compared with, each
/// operation checked to be one this process evaluates exactly as the server would.
struct ConditionCompiler {
    let parameters: [SQLValue]
    let columns: [String: CompiledCondition.Column]
    /// The columns the condition reads.
    private(set) var used: Set<String> = []

    init(parameters: [SQLValue], columns: [String: CompiledCondition.Column]) {
        self.parameters = parameters
        self.columns = columns
    }

    mutating func node(_ node: ConditionNode) -> CompiledCondition.Node? {
        switch node {
        case .and(let terms): return all(terms).map(CompiledCondition.Node.and)
        case .or(let terms): return all(terms).map(CompiledCondition.Node.or)
        case .not(let inner): return self.node(inner).map(CompiledCondition.Node.not)
        case .compare(let a, let op, let b):
            guard let (kind, ordered) = pairKind(a, b), op == .equal || op == .notEqual || ordered,
                  let x = operand(a, as: kind), let y = operand(b, as: kind) else { return nil }
            return .compare(x, op, y)
        case .isNull(let a, let negated):
            // Any column's NULL-ness is known, whatever its type.
            if case .column(let name) = a, columns[name] != nil {
                used.insert(name)
                return .isNull(.column(name), negated: negated)
            }
            guard let kind = constantKind(a), let x = operand(a, as: kind) else { return nil }
            return .isNull(x, negated: negated)
        case .inList(let a, let list, let negated):
            guard case .column(let name) = a, let kind = columns[name]?.kind, let x = operand(a, as: kind) else { return nil }
            var elements: [CompiledCondition.Operand] = []
            for element in list {
                guard let y = operand(element, as: kind) else { return nil }
                elements.append(y)
            }
            return .inList(x, elements, negated: negated)
        case .between(let a, let low, let high, let negated):
            guard case .column(let name) = a, let column = columns[name], let kind = column.kind,
                  kind != .text || column.bytewiseOrder, kind != .uuid,
                  let x = operand(a, as: kind), let l = operand(low, as: kind), let h = operand(high, as: kind) else { return nil }
            return .between(x, l, h, negated: negated)
        case .like(let a, let pattern, let negated):
            guard case .column(let name) = a, columns[name]?.kind == .text, let x = operand(a, as: .text),
                  case .constant(.text(let bytes)?) = operand(pattern, as: .text),
                  let prefix = Self.prefix(ofPattern: bytes) else { return nil }
            return .likePrefix(x, prefix, negated: negated)
        case .value(let a):
            guard case .column(let name) = a, columns[name]?.kind == .boolean else {
                if case .boolean(let flag) = a { return .value(.constant(.boolean(flag))) }
                if case .null = a { return .value(.constant(nil)) }
                return nil
            }
            used.insert(name)
            return .value(.column(name))
        }
    }

    private mutating func all(_ nodes: [ConditionNode]) -> [CompiledCondition.Node]? {
        var compiled: [CompiledCondition.Node] = []
        for node in nodes {
            guard let next = self.node(node) else { return nil }
            compiled.append(next)
        }
        return compiled
    }

    /// The kind two compared operands are read as (at least one a column of a kind evaluated
    /// here), and whether `<` and `>` mean what they do here for it.
    private func pairKind(_ a: ConditionOperand, _ b: ConditionOperand) -> (ConditionValue.Kind, Bool)? {
        let columnsCompared = [a, b].compactMap { operand -> CompiledCondition.Column? in
            if case .column(let name) = operand { return columns[name] }
            return nil
        }
        guard let first = columnsCompared.first, let kind = first.kind,
              columnsCompared.allSatisfy({ $0.kind == kind }) else { return nil }
        let ordered = switch kind {
        case .integer, .float, .boolean: true
        case .text: columnsCompared.allSatisfy(\.bytewiseOrder)
        case .uuid: false
        }
        return (kind, ordered)
    }

    private func constantKind(_ a: ConditionOperand) -> ConditionValue.Kind? {
        switch a {
        case .null: .integer
        case .boolean: .boolean
        default: nil
        }
    }

    /// An operand read as `kind`: a column of that kind, or a constant that reads as one.
    private mutating func operand(_ operand: ConditionOperand, as kind: ConditionValue.Kind) -> CompiledCondition.Operand? {
        switch operand {
        case .column(let name):
            guard columns[name]?.kind == kind else { return nil }
            used.insert(name)
            return .column(name)
        case .null:
            return .constant(nil)
        case .boolean(let flag):
            return kind == .boolean ? .constant(.boolean(flag)) : nil
        case .string(let text):
            return ConditionValue.parse(text, as: kind).map { .constant($0) }
        case .number(let text):
            // A number literal is an integer or a numeric: only those read exactly here.
            guard kind == .integer || kind == .float, let value = ConditionValue.parse(text, as: kind) else { return nil }
            if kind == .float, !text.contains(where: { ".eE".contains($0) }), Int64(text) == nil { return nil }
            return .constant(value)
        case .parameter(let number):
            guard number >= 1, number <= parameters.count else { return nil }
            switch parameters[number - 1] {
            case .null: return .constant(nil)
            case .text(let text): return ConditionValue.parse(text, as: kind).map { .constant($0) }
            case .bytes: return nil
            }
        }
    }

    /// The literal prefix of a `LIKE` pattern that is a prefix and `%` (and nothing else).
    static func prefix(ofPattern bytes: [UInt8]) -> [UInt8]? {
        guard let last = bytes.last, last == UInt8(ascii: "%") else { return nil }
        let prefix = bytes.dropLast()
        guard !prefix.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "\\") }) else { return nil }
        return Array(prefix)
    }
}
