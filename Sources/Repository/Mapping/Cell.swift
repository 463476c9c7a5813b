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

    /// Decodes as `T`: Foundation types directly, `json`/`jsonb` through JSON, anything else
    /// through its `Decodable` conformance over this cell.
    func decode<T: Decodable>(_: T.Type) throws -> T {
        switch T.self {
        case is Date.Type: return try decodeDate() as! T
        case is UUID.Type: return try decodeUUID() as! T
        case is Data.Type: return try decodeData() as! T
        case is Decimal.Type: return try decodeDecimal() as! T
        default: break
        }
        if (type == .jsonb || type == .json), T.self != String.self, let bytes {
            do {
                return try JSONCoding.decoder.decode(T.self, from: Data(jsonText(bytes).utf8))
            } catch {
                throw self.error(T.self, .invalidData(String(describing: error)))
            }
        }
        return try T(from: CellDecoder(cell: self))
    }

    private func jsonText(_ bytes: ArraySlice<UInt8>) -> String {
        // jsonb's binary form is a version byte (1) followed by the JSON text.
        String(decoding: type == .jsonb ? bytes.dropFirst() : bytes, as: UTF8.self)
    }

    func decodeString() throws -> String {
        let bytes = try nonNull(String.self)
        switch type {
        case _ where type.isTextual: return String(decoding: bytes, as: UTF8.self)
        case .jsonb: return jsonText(bytes)
        case .uuid: return try decodeUUID().uuidString.lowercased()
        case .numeric: return try numericText(String.self)
        default: throw error(String.self, .typeMismatch)
        }
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
            guard let value = T(try numericText(T.self)) else { throw error(T.self, .outOfRange) }
            return value
        default: throw error(T.self, .typeMismatch)
        }
        guard let value = T(exactly: wide) else { throw error(T.self, .outOfRange) }
        return value
    }

    func decodeDouble() throws -> Double {
        let bytes = try nonNull(Double.self)
        var reader = BinaryReader(bytes)
        switch (type, bytes.count) {
        case (.float8, 8): return Double(bitPattern: try reader.read(UInt64.self))
        case (.float4, 4): return Double(Float(bitPattern: try reader.read(UInt32.self)))
        case (.int2, _), (.int4, _), (.int8, _): return Double(try decodeInteger(Int64.self))
        case (.numeric, _):
            guard let value = Double(try numericText(Double.self)) else { throw error(Double.self, .outOfRange) }
            return value
        default: throw error(Double.self, .typeMismatch)
        }
    }

    func decodeDate() throws -> Date {
        var reader = BinaryReader(try nonNull(Date.self))
        switch type {
        case .timestamptz, .timestamp:
            return TimestampFormat.date(postgresMicroseconds: try reader.read(Int64.self))
        case .date:
            let days = try reader.read(Int32.self)
            if days == .max { return .distantFuture }
            if days == .min { return .distantPast }
            return TimestampFormat.date(postgresMicroseconds: Int64(days) * 86_400_000_000)
        default: throw error(Date.self, .typeMismatch)
        }
    }

    func decodeUUID() throws -> UUID {
        let bytes = try nonNull(UUID.self)
        guard type == .uuid, bytes.count == 16 else { throw error(UUID.self, .typeMismatch) }
        let b = Array(bytes)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    func decodeData() throws -> Data {
        let bytes = try nonNull(Data.self)
        guard type == .bytea else { throw error(Data.self, .typeMismatch) }
        return Data(bytes)
    }

    func decodeDecimal() throws -> Decimal {
        let text: String
        switch type {
        case .numeric: text = try numericText(Decimal.self)
        case .int2, .int4, .int8: text = String(try decodeInteger(Int64.self))
        case .float4, .float8: text = String(try decodeDouble())
        default: _ = try nonNull(Decimal.self); throw error(Decimal.self, .typeMismatch)
        }
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw error(Decimal.self, .invalidData(text))
        }
        return value
    }

    private func numericText(_ swiftType: Any.Type) throws -> String {
        do {
            return try NumericFormat.string(fromBinary: try nonNull(swiftType))
        } catch let error as ColumnDecodingError {
            throw error
        } catch {
            throw self.error(swiftType, .invalidData("truncated numeric"))
        }
    }

    /// The elements of a one-dimensional binary array, as cells of the element type.
    func arrayElements(_ swiftType: Any.Type) throws -> [Cell] {
        let bytes = try nonNull(swiftType)
        guard type.isArray else { throw error(swiftType, .typeMismatch) }
        do {
            var reader = BinaryReader(bytes)
            let dimensions = try reader.read(Int32.self)
            _ = try reader.read(Int32.self) // has-nulls flag
            let elementType = PostgresType(rawValue: try reader.read(UInt32.self))
            if dimensions == 0 { return [] }
            guard dimensions == 1 else {
                throw error(swiftType, .invalidData("\(dimensions)-dimensional arrays are not supported"))
            }
            let count = Int(try reader.read(Int32.self))
            _ = try reader.read(Int32.self) // lower bound
            return try (0..<count).map { index in
                let length = Int(try reader.read(Int32.self))
                let element = length < 0 ? nil : try reader.read(count: length)
                return Cell(column: "\(column)[\(index + 1)]", type: elementType, bytes: element)
            }
        } catch is BinaryReader.Truncated {
            throw error(swiftType, .invalidData("truncated array"))
        }
    }
}
