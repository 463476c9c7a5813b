import Foundation

/// Statement parameters laid out for `PQexecPrepared`: one buffer of NUL-terminated values
/// plus the lengths and formats libpq wants.
struct BoundParameters {
    private var buffer: [UInt8] = []
    private var offsets: [Int?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    init(_ values: [SQLValue], statement: String) throws {
        for (index, value) in values.enumerated() {
            switch value {
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                let utf8 = text.utf8
                if utf8.contains(0) {
                    var error = PostgresError(.invalidParameter, "parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot store", statement: statement)
                    error.statementWasNotSent = true
                    throw error
                }
                append(utf8, format: 0)
            case .bytes(let bytes):
                append(bytes, format: 1)
            }
        }
    }

    /// How many parameters there are.
    var count: Int { lengths.count }

    private mutating func append(_ bytes: some Collection<UInt8>, format: Int32) {
        offsets.append(buffer.count)
        lengths.append(Int32(bytes.count))
        formats.append(format)
        buffer.append(contentsOf: bytes)
        buffer.append(0)
    }

    /// Calls `body` with the parameter count and C arrays of values, lengths and formats.
    func withPointers<R>(
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        buffer.withUnsafeBufferPointer { raw in
            let base = UnsafeRawPointer(raw.baseAddress)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.flatMap { base?.advanced(by: $0).assumingMemoryBound(to: CChar.self) }
            }
            return pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(offsets.count), values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}

/// Calls `body` with two NULL-terminated arrays of C strings.
func withCStringArrays<R>(
    _ first: [String], _ second: [String],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> R
) -> R {
    let firstCopies = first.map { UnsafePointer(strdup($0)) } + [nil]
    let secondCopies = second.map { UnsafePointer(strdup($0)) } + [nil]
    defer {
        for pointer in firstCopies + secondCopies { free(UnsafeMutablePointer(mutating: pointer)) }
    }
    return firstCopies.withUnsafeBufferPointer { a in
        secondCopies.withUnsafeBufferPointer { b in body(a.baseAddress!, b.baseAddress!) }
    }
}
