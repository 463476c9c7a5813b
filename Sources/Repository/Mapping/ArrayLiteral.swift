/// PostgreSQL's text syntax for arrays: `{"a","b \"quoted\"",NULL}`, and nested for more
/// dimensions, `{{"1","2"},{"3","4"}}`.
enum ArrayLiteral {
    /// An array's elements, or a scalar.
    indirect enum Node {
        case scalar(SQLValue)
        case array([Node])

        /// Whether there is a scalar anywhere in it.
        var hasScalar: Bool {
            switch self {
            case .scalar: true
            case .array(let elements): elements.contains { $0.hasScalar }
            }
        }
    }

    /// The literal of a one-dimensional array of these elements (written straight, with no
    /// ``Node`` per element: a batch of keys is thousands of them).
    static func string(from elements: [SQLValue]) -> String {
        guard !elements.isEmpty else { return "{}" }
        var literal = ""
        appendList(elements, to: &literal, append)
        return literal
    }

    /// The literal of a one-dimensional array of integers, `{1,-2,3}` (digits need no quotes).
    static func string(integers: [some BinaryInteger]) -> String {
        var literal = "{"
        literal.reserveCapacity(2 + integers.count * 8)
        for index in integers.indices {
            if index > integers.startIndex { literal += "," }
            literal += String(integers[index])
        }
        return literal + "}"
    }

    /// The literal of `node`; `{}` for an array with no element at any depth (`[[], []]`),
    /// which is how PostgreSQL writes every empty array (it refuses `{{},{}}`).
    static func string(_ node: Node) -> String {
        guard node.hasScalar else { return "{}" }
        var literal = ""
        append(node, to: &literal)
        return literal
    }

    private static func append(_ node: Node, to literal: inout String) {
        switch node {
        case .scalar(let value): append(value, to: &literal)
        case .array(let elements): appendList(elements, to: &literal, append)
        }
    }

    /// `{`, each element as `appendElement` writes it, separated by commas, `}`.
    private static func appendList<Element>(_ elements: [Element], to literal: inout String,
                                            _ appendElement: (Element, inout String) -> Void) {
        literal += "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            appendElement(element, &literal)
        }
        literal += "}"
    }

    private static func append(_ value: SQLValue, to literal: inout String) {
        switch value {
        case .null: literal += "NULL"
        case .text(let text): appendQuoted(text, to: &literal)
        case .bytes(let bytes): appendQuoted(#"\x"# + TextForm.hex(bytes), to: &literal)
        }
    }

    /// Refuses what PostgreSQL cannot hold as the same array: sub-arrays of different lengths
    /// or depths (its arrays are rectangular), a NULL sub-array, an empty sub-array (it would
    /// read back as an empty array of one dimension).
    static func checkRectangular(_ node: Node) throws(ArrayShapeError) {
        func isArray(_ node: Node) -> Bool { if case .array = node { true } else { false } }
        func shape(_ node: Node, _ path: String) throws(ArrayShapeError) -> [Int] {
            guard case .array(let elements) = node else { return [] }
            let nested = elements.contains(where: isArray)
            var inner: [Int]?
            for (index, element) in elements.enumerated() {
                let elementPath = path + "[\(index)]"
                if nested, !isArray(element) {
                    throw ArrayShapeError(description: "\(elementPath) is nil where a sub-array belongs: a PostgreSQL array has no NULL sub-arrays")
                }
                if case .array(let children) = element, children.isEmpty {
                    throw ArrayShapeError(description: "\(elementPath) is empty: a PostgreSQL array has no empty sub-arrays (it would read back as [])")
                }
                let found = try shape(element, elementPath)
                if let inner, inner != found {
                    throw ArrayShapeError(description: "\(elementPath) has \(found.map(String.init).joined(separator: "×")) elements where \(path)[0] has \(inner.map(String.init).joined(separator: "×")): PostgreSQL's arrays are rectangular")
                }
                inner = found
            }
            return [elements.count] + (inner ?? [])
        }
        _ = try shape(node, "")
    }

    /// `text` between double quotes, each `"` and `\\` escaped — scalar by scalar: as
    /// `Character`s, a quote followed by a combining mark is one character, not a quote.
    private static func appendQuoted(_ text: String, to literal: inout String) {
        literal += "\""
        if text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            for scalar in text.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { literal.unicodeScalars.append("\\") }
                literal.unicodeScalars.append(scalar)
            }
        } else {
            literal += text
        }
        literal += "\""
    }
}

/// A nested array that PostgreSQL cannot hold as it is.
struct ArrayShapeError: Error, CustomStringConvertible {
    let description: String
}

/// An array that can be one level of a PostgreSQL array literal.
protocol ArrayLiteralConvertible {
    var arrayNode: ArrayLiteral.Node { get }
}

extension Array: ArrayLiteralConvertible where Element: SQLValueConvertible {
    var arrayNode: ArrayLiteral.Node {
        .array(map { ($0 as? any ArrayLiteralConvertible)?.arrayNode ?? .scalar($0.sqlValue) })
    }
}
