extension Var: Equatable {
    /// Whether both are the same reference object. Two `Var`s holding equal values are not
    /// equal; two sub-references made separately (`person[\.name]` twice) are not either.
    public static func == (lhs: Var, rhs: Var) -> Bool { lhs === rhs }
}

extension Var: Hashable {
    /// Hashes the object's identity (see ``==(_:_:)``).
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Var: Encodable where Value: Encodable {
    /// Encodes the current value (a `Var` encodes like its value).
    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

extension Var: Decodable where Value: Decodable {
    /// A new root `Var` holding the decoded value (not live: persistence is not encoded).
    public convenience init(from decoder: any Decoder) throws {
        self.init(try Value(from: decoder))
    }
}
