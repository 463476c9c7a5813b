/// A live query's condition, parsed: the part of SQL's expression language this process
/// evaluates itself. Anything else — a function call, a cast, a subquery, an operator not
/// listed — makes the parser give up, and the server checks the condition instead.
indirect enum ConditionNode: Equatable {
    case and([ConditionNode])
    case or([ConditionNode])
    case not(ConditionNode)
    /// `a = b`, `a <> b`, `a < b`, …
    case compare(ConditionOperand, ComparisonOperator, ConditionOperand)
    /// `a IS NULL`, `a IS NOT NULL`.
    case isNull(ConditionOperand, negated: Bool)
    /// `a IN (b, c…)`, `a NOT IN (…)`.
    case inList(ConditionOperand, [ConditionOperand], negated: Bool)
    /// `a BETWEEN b AND c`, `a NOT BETWEEN …`.
    case between(ConditionOperand, ConditionOperand, ConditionOperand, negated: Bool)
    /// `a LIKE b`, `a NOT LIKE b`.
    case like(ConditionOperand, ConditionOperand, negated: Bool)
    /// A boolean operand on its own: a column, `TRUE`, `FALSE`, `NULL`, a parameter.
    case value(ConditionOperand)
}

enum ComparisonOperator: String, Equatable {
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// What a comparison compares.
enum ConditionOperand: Equatable {
    case column(String)
    case parameter(Int)
    case string(String)
    case number(String)
    case boolean(Bool)
    case null
}

/// A recursive-descent parser over ``ConditionLexer``'s tokens, with SQL's precedence:
/// `OR` < `AND` < `NOT` < `IS`, comparisons, `IN`, `BETWEEN`, `LIKE`.
struct ConditionParser {
    private let tokens: [ConditionToken]
    private var position = 0

    /// The condition parsed whole, or nil when any part of it is outside what is evaluated here.
    static func parse(_ sql: String) -> ConditionNode? {
        guard let tokens = ConditionLexer.tokens(sql) else { return nil }
        var parser = ConditionParser(tokens: tokens)
        guard let node = parser.or(), parser.position == tokens.count else { return nil }
        return node
    }

    private init(tokens: [ConditionToken]) { self.tokens = tokens }

    private var peek: ConditionToken? { position < tokens.count ? tokens[position] : nil }

    private mutating func take(_ word: String) -> Bool {
        guard peek == .word(word) else { return false }
        position += 1
        return true
    }

    private mutating func take(symbol: String) -> Bool {
        guard peek == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func or() -> ConditionNode? {
        guard var terms = and().map({ [$0] }) else { return nil }
        while take("or") {
            guard let next = and() else { return nil }
            terms.append(next)
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func and() -> ConditionNode? {
        guard var terms = not().map({ [$0] }) else { return nil }
        while take("and") {
            guard let next = not() else { return nil }
            terms.append(next)
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func not() -> ConditionNode? {
        if take("not") { return not().map(ConditionNode.not) }
        return predicate()
    }

    private mutating func predicate() -> ConditionNode? {
        if peek == .symbol("("), let grouped = parenthesized() { return grouped }
        guard let left = operand() else { return nil }
        if take("is") {
            let negated = take("not")
            if take("null") { return .isNull(left, negated: negated) }
            return nil  // IS TRUE, IS DISTINCT FROM…: left to the server
        }
        let negated = take("not")
        if take("in") {
            guard take(symbol: "("), var list = operand().map({ [$0] }) else { return nil }
            while take(symbol: ",") {
                guard let next = operand() else { return nil }
                list.append(next)
            }
            return take(symbol: ")") ? .inList(left, list, negated: negated) : nil
        }
        if take("between") {
            guard let low = operand(), take("and"), let high = operand() else { return nil }
            return .between(left, low, high, negated: negated)
        }
        if take("like") {
            return operand().map { .like(left, $0, negated: negated) }
        }
        if negated { return nil }
        if case .symbol(let symbol)? = peek, let comparison = ComparisonOperator(rawValue: symbol == "!=" ? "<>" : symbol) {
            position += 1
            return operand().map { .compare(left, comparison, $0) }
        }
        return .value(left)
    }

    /// `( condition )`, backtracking when the parentheses hold an operand instead.
    private mutating func parenthesized() -> ConditionNode? {
        let start = position
        position += 1
        if let inner = or(), take(symbol: ")") {
            // `(a) = b` parses its operand as a condition first: only a whole condition stays.
            if case .symbol(let symbol)? = peek, ComparisonOperator(rawValue: symbol) != nil || symbol == "!=" {
                position = start
                return nil
            }
            if [.word("is"), .word("in"), .word("between"), .word("like"), .word("not")].contains(peek) {
                position = start
                return nil
            }
            return inner
        }
        position = start
        return nil
    }

    private mutating func operand() -> ConditionOperand? {
        guard let token = peek else { return nil }
        position += 1
        switch token {
        case .word("true"): return .boolean(true)
        case .word("false"): return .boolean(false)
        case .word("null"): return .null
        case .word(let name) where !Self.reserved.contains(name): return column(name)
        case .quotedName(let name): return column(name)
        case .parameter(let number): return .parameter(number)
        case .string(let text): return .string(text)
        case .number(let text): return .number(text)
        case .symbol("-"):
            guard case .number(let text)? = peek else { return nil }
            position += 1
            return .number("-" + text)
        default: return nil
        }
    }

    /// A column, or `table.column` (the query's own table: only the column counts); a name
    /// followed by `(` is a function call, and `::` a cast: not evaluated here.
    private mutating func column(_ name: String) -> ConditionOperand? {
        if take(symbol: ".") {
            switch peek {
            case .word(let column)?, .quotedName(let column)?:
                position += 1
                return peek == .symbol("(") || peek == .symbol("::") ? nil : .column(column)
            default: return nil
            }
        }
        return peek == .symbol("(") || peek == .symbol("::") ? nil : .column(name)
    }

    /// Words that are never column names here.
    private static let reserved: Set<String> = [
        "and", "or", "not", "is", "in", "between", "like", "ilike", "similar", "select", "exists", "case", "when", "then",
        "else", "end", "any", "all", "some", "array", "distinct", "from", "cast", "collate", "escape", "isnull", "notnull",
        "symmetric", "current_date", "current_time", "current_timestamp", "localtime", "localtimestamp", "current_user", "session_user", "user",
    ]
}
