import Foundation

/// One value of a result in PostgreSQL's binary format, with what is needed to explain a mismatch.
struct Cell {
    let column: String
    let type: PostgresType
    let bytes: ArraySlice<UInt8>?

    func error(_ swiftType: Any.Type, _ reason: ColumnDecodingError.Reason) -> ColumnDecodingError {
        ColumnDecodingError(column: column, swiftType: swiftType, postgresType: type, reason: reason)
    }

    func nonNull(_ swiftType: Any.Type) throws -> ArraySlice<UInt8> {
        guard let bytes else { throw error(swiftType, .null) }
        return bytes
    }

    /// Decodes as `T`: Foundation types and the library's column types directly, `json`/`jsonb`
    /// through JSON, anything else through its `Decodable` conformance over this cell.
    func decode<T: Decodable>(_: T.Type) throws -> T {
        switch T.self {
        case is Date.Type: return try decodeDate() as! T
        case is UUID.Type: return try decodeUUID() as! T
        case is Data.Type: return try decodeData() as! T
        case is Decimal.Type: return try decodeDecimal() as! T
        default: break
        }
        if let columnType = T.self as? any CellDecodable.Type {
            // NULL: named as the type asked for, not as what its own decoding asks of the cell.
            guard bytes != nil else { throw error(T.self, .null) }
            return try columnType.init(cell: self) as! T
        }
        // `String` (also as an optional) takes the document's text, as stored.
        if (type == .jsonb || type == .json), T.self != String.self, T.self != String?.self, let bytes {
            let json = jsonBytes(bytes)
            do {
                return try JSONCoding.decoder.decode(T.self, from: Data(json))
            } catch where JSONNumberDiagnosis.isRefusedValidJSON(error) {
                throw self.error(T.self, .invalidData(JSONNumberDiagnosis.explain(T.self, json: json)))
            } catch let error as DecodingError {
                throw self.error(T.self, .invalidData("JSON: \(error.summary)"))
            } catch {
                throw self.error(T.self, .invalidData(String(describing: error)))
            }
        }
        do {
            return try T(from: CellDecoder(cell: self, swiftType: T.self))
        } catch DecodingError.dataCorrupted where T.self is any RawRepresentable.Type {
            // An enum without a case for the value: name the value, the PostgreSQL type and the Swift type.
            let value = (try? decodeString()).map { "\"\($0)\"" } ?? "the value"
            throw error(T.self, .invalidData("\(value) is not a raw value of \(T.self)"))
        }
    }

    /// Whether this is a `json`/`jsonb` value holding JSON `null`.
    var holdsJSONNull: Bool {
        guard type == .jsonb || type == .json, let bytes, bytes.count <= 64 else { return false }
        return jsonBytes(bytes).filter { !SQLLexer.isSpace($0) } == Array("null".utf8)
    }

    /// The JSON text of a `json`/`jsonb` value: jsonb's version byte dropped, and a `json`
    /// object's repeated keys reduced to the last, as PostgreSQL's JSON functions read them.
    func jsonBytes(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        // jsonb's binary form is a version byte (1) followed by the JSON text.
        type == .jsonb ? Array(bytes.dropFirst()) : JSONLastKeyWins.apply(Array(bytes))
    }

    func decodeBool() throws -> Bool {
        let bytes = try nonNull(Bool.self)
        guard type == .bool, bytes.count == 1 else { throw error(Bool.self, .typeMismatch) }
        return bytes.first != 0
    }

    func decodeInteger<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let bytes = try nonNull(T.self)
        let wide: Int64
        var reader = BinaryReader(bytes)
        switch (type, bytes.count) {
        case (.int2, 2): wide = Int64(try reader.read(Int16.self))
        case (.int4, 4): wide = Int64(try reader.read(Int32.self))
        case (.int8, 8): wide = try reader.read(Int64.self)
        case (.oid, 4), (.xid, 4): wide = Int64(try reader.read(UInt32.self))
        case (.numeric, _):
            let text = try numericText(T.self)
            guard let integer = DecimalValue(text)?.integerText, let value = T(integer) else { throw error(T.self, .outOfRange) }
            return value
        default: throw error(T.self, .typeMismatch)
        }
        guard let value = T(exactly: wide) else { throw error(T.self, .outOfRange) }
        return value
    }

    /// A `Double`, refusing a value it cannot hold exactly (a numeric with more digits than a
    /// double keeps, an integer past 2^53) rather than rounding it.
    func decodeDouble() throws -> Double {
        let bytes = try nonNull(Double.self)
        var reader = BinaryReader(bytes)
        switch (type, bytes.count) {
        case (.float8, 8): return Double(bitPattern: try reader.read(UInt64.self))
        case (.float4, 4): return Double(Float(bitPattern: try reader.read(UInt32.self)))
        case (.int2, _), (.int4, _), (.int8, _):
            guard let value = Double(exactly: try decodeInteger(Int64.self)) else { throw error(Double.self, .outOfRange) }
            return value
        case (.numeric, _):
            let text = try numericText(Double.self)
            switch text {
            case "NaN": return .nan
            case "Infinity": return .infinity
            case "-Infinity": return -.infinity
            default: break
            }
            guard let value = Double(text), value.isFinite, DecimalValue(text) == DecimalValue(value.description) else {
                throw error(Double.self, .invalidData("\(text) has more digits than a Double holds; read it as Decimal or String"))
            }
            return value
        default: throw error(Double.self, .typeMismatch)
        }
    }

    /// A `Float`: a `real` as it is; a wider value only when the `Float` reads back as it.
    func decodeFloat() throws -> Float {
        let bytes = try nonNull(Float.self)
        if type == .float4, bytes.count == 4 {
            var reader = BinaryReader(bytes)
            return Float(bitPattern: try reader.read(UInt32.self))
        }
        let double = try decodeDouble()
        let float = Float(double)
        guard double.isNaN || Double(float) == double || Double(float.description) == double else {
            throw error(Float.self, .invalidData("\(double) has more digits than a Float holds; read it as Double"))
        }
        return float
    }

    func numericText(_ swiftType: Any.Type) throws -> String {
        do {
            return try NumericFormat.string(fromBinary: try nonNull(swiftType))
        } catch let error as ColumnDecodingError {
            throw error
        } catch {
            throw self.error(swiftType, .invalidData("truncated numeric"))
        }
    }
}
