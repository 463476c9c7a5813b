import Foundation

/// The checksum another migration tool recorded of a file it applied, computed as that tool
/// computes it, so that ``Migrator/adopt(_:acceptingEditedFiles:)`` can tell a file edited since.
enum ForeignChecksum: Sendable, Hashable {
    /// sqlx's: SHA-384 of the file's bytes.
    case sha384(Data)
    /// Flyway's: CRC-32 of the file's lines without their line ends (and without a byte-order
    /// mark), as a signed 32-bit integer.
    case crc32(Int32)

    /// Whether `contents`, a file's bytes, are what the tool applied. sqlx's checksum is also
    /// taken of the file with its line ends as LF and as CRLF, so that a checkout that changed
    /// them is not an edit; Flyway's leaves line ends out. SHA-384 is the server's (`sha384`,
    /// PostgreSQL 11 and later), through `connection`.
    func matches(_ contents: Data, on connection: Connection) async throws -> Bool {
        switch self {
        case .crc32(let recorded):
            return Self.flyway(contents) == recorded
        case .sha384(let recorded):
            let lf = Self.replacing([13, 10], with: [10], in: Array(contents))
            let crlf = Self.replacing([10], with: [13, 10], in: lf)
            let result = try await connection.query("SELECT $4 IN (sha384($1), sha384($2), sha384($3))",
                                                    values: [.bytes(Array(contents)), .bytes(lf), .bytes(crlf), .bytes(Array(recorded))])
            return try result[0].decode(Bool.self, at: 0)
        }
    }

    /// Flyway's checksum of a file: it reads the file line by line (a line ends at LF, CR or
    /// CRLF), drops a UTF-8 byte-order mark, and feeds each line's bytes to one CRC-32.
    static func flyway(_ contents: Data) -> Int32 {
        var bytes = contents[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes where byte != 10 && byte != 13 {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Int32(bitPattern: ~crc)
    }

    /// `bytes` with each `pattern` replaced by `replacement`.
    private static func replacing(_ pattern: [UInt8], with replacement: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + bytes.count / 16)
        var index = 0
        while index < bytes.count {
            if bytes[index...].starts(with: pattern) {
                result += replacement
                index += pattern.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }
}
