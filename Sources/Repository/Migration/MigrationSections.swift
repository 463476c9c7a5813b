import Foundation

/// The up and down SQL of a migration file, read in one pass over its UTF-8 bytes.
///
/// Markers are found on lines ended by any break (`\n`, `\r\n`, `\r`, or another break
/// `Character.isNewline` knows). A section's SQL is the file's own bytes, sent as they are (a
/// U+2028 or a form feed inside a string literal stays one), without trailing white space; its
/// checksum is taken of the same text with every break made `\n`, so it does not depend on how
/// the file was checked out. Once breaks are `\n`, a section is one slice of the file, found with
/// `memchr`: fast in a debug build too.
struct MigrationSections {
    struct Section {
        /// The SQL as the file has it.
        var sql: String
        /// The 1-based line of the file on which the section's text starts.
        var line: Int
        var inTransaction: Bool
        /// The SQL with every line break made `\n`, when that is not ``sql`` itself: what the
        /// checksum is taken of.
        var withNewlines: String? = nil
    }

    var up: Section
    /// Nil when the file has no down section; an empty text when it has an empty one (a
    /// deliberate no-op rollback).
    var down: Section?

    /// dbmate's layout: a `-- migrate:up` section and an optional `-- migrate:down` section.
    init(marked contents: String, file: String) throws {
        let text = try Self.normalized(contents, file: file)
        var markers: [(kind: String, line: Int, inTransaction: Bool, start: Int, end: Int)] = []
        try text.bytes.withUnsafeBufferPointer { buffer in
            var lineNumber = 0
            var lines = LineSlices(buffer)
            while let line = lines.next() {
                lineNumber += 1
                let first = Self.firstNonBlank(buffer, line)
                guard first < line.upperBound else { continue }
                if buffer[first] == 0x2D /* - */, let marker = Self.marker(buffer, line) {
                    let words = marker.split(separator: " ").map(String.init)
                    guard let kind = words.first, ["up", "down"].contains(kind), !markers.contains(where: { $0.kind == kind }) else {
                        throw MigrationError(.invalidFile, "\(file):\(lineNumber): unexpected marker \"-- migrate:\(marker)\"; expected one -- migrate:up and at most one -- migrate:down")
                    }
                    // dbmate's one option; a misspelt one would silently run the section in a transaction.
                    if let unknown = words.dropFirst().first(where: { !["transaction:false", "transaction:true"].contains($0) }) {
                        throw MigrationError(.invalidFile, "\(file):\(lineNumber): unknown option \(TerminalText.quotedForMessage(unknown)) on the -- migrate:\(kind) marker; the one option is transaction:false")
                    }
                    if !markers.isEmpty { markers[markers.count - 1].end = line.lowerBound }
                    markers.append((kind, lineNumber + 1, !words.contains("transaction:false"), line.upperBound + 1, buffer.count))
                } else if buffer[first] == 0x2D, let lookalike = Self.nearMissMarker(buffer, line) {
                    // dbmate reads it as a comment: the section above would run what follows it.
                    throw MigrationError(.invalidFile, "\(file):\(lineNumber): \(TerminalText.quotedForMessage(lookalike)) looks like a section marker but is not one "
                                         + "(other dashes, spaces or letter case): dbmate takes it for a comment, and would run what follows in the section before it; write it -- migrate:up or -- migrate:down")
                } else if markers.isEmpty, !(first + 1 < line.upperBound && buffer[first] == 0x2D && buffer[first + 1] == 0x2D) {
                    throw MigrationError(.invalidFile, "\(file):\(lineNumber): SQL before the -- migrate:up marker")
                }
            }
        }
        func section(_ kind: String) -> Section? {
            markers.first { $0.kind == kind }.map { marker in
                text.section(marker.start < marker.end ? marker.start..<marker.end : marker.start..<marker.start,
                             line: marker.line, inTransaction: marker.inTransaction)
            }
        }
        guard let up = section("up") else { throw MigrationError(.invalidFile, "\(file): no -- migrate:up section") }
        self.up = up
        self.down = section("down")
    }

    /// Whether `contents` has a line that looks like a section marker — dbmate's `-- migrate:`
    /// (with any blanks after the dashes, or none, as dbmate reads them), goose's `-- +goose`,
    /// sql-migrate's `-- +migrate` — so that a file with sections is never taken for plain SQL,
    /// which would run its down section too.
    static func hasMarker(_ contents: String) -> Bool {
        contents.split(whereSeparator: \.isNewline).contains { line in
            let text = line.drop { $0 == " " || $0 == "\t" }
            guard text.hasPrefix("--") else { return false }
            let comment = text.dropFirst(2).drop { $0 == " " || $0 == "\t" }
            return comment.hasPrefix("migrate:") || comment.hasPrefix("+goose") || comment.hasPrefix("+migrate")
        }
    }

    /// The whole file is one section (golang-migrate's, sqlx's and Flyway's layouts); a first
    /// line `-- no-transaction` (sqlx's directive) runs it outside a transaction.
    static func whole(_ contents: String, file: String) throws -> Section {
        let text = try normalized(contents, file: file)
        let firstLine = text.bytes.withUnsafeBufferPointer { buffer in
            var lines = LineSlices(buffer)
            return lines.next().map { String(decoding: buffer[$0], as: UTF8.self) } ?? ""
        }
        let inTransaction = firstLine.trimmingCharacters(in: .whitespaces) != "-- no-transaction"
        return text.section(0..<text.bytes.count, line: 1, inTransaction: inTransaction)
    }

    /// The text after `-- migrate:` on this line, if it is a marker line — with any blanks
    /// between the dashes and `migrate:`, or none, as dbmate reads them. Other comment lines
    /// are told apart by their bytes, without making a string of each.
    private static func marker(_ buffer: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> Substring? {
        let prefix: StaticString = "migrate:"
        var first = firstNonBlank(buffer, line)
        guard line.upperBound - first >= 2, buffer[first] == 0x2D, buffer[first + 1] == 0x2D else { return nil }
        first += 2
        while first < line.upperBound, buffer[first] == 0x20 || buffer[first] == 0x09 { first += 1 }
        guard line.upperBound - first >= prefix.utf8CodeUnitCount,
              UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount).elementsEqual(buffer[first..<first + prefix.utf8CodeUnitCount]) else {
            return nil
        }
        let text = String(decoding: buffer[(first + prefix.utf8CodeUnitCount)..<line.upperBound], as: UTF8.self)
        return Substring(text.trimmingCharacters(in: .whitespaces))
    }

    /// The line, when it is a comment that reads as a marker once dashes and every kind of
    /// space (a no-break space pasted from a web page, three dashes) are dropped, yet is not one.
    private static func nearMissMarker(_ buffer: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> String? {
        // Cheap first: only a comment line holding a colon is looked at closer.
        guard line.count >= 10, buffer[line].contains(0x3A /* : */) else { return nil }
        let text = String(decoding: buffer[line], as: UTF8.self)
        let isBlank = { (scalar: Unicode.Scalar) in scalar.properties.isWhitespace || scalar == "\u{FEFF}" || scalar == "\u{200B}" }
        let rest = String(String.UnicodeScalarView(text.unicodeScalars.drop { $0 == "-" || isBlank($0) })).lowercased()
        guard rest.hasPrefix("migrate:") else { return nil }
        // Only `up` or `down` after it: `-- Migrate: copy the accounts` is a comment to anyone.
        let word = rest.dropFirst(8).unicodeScalars.drop(while: isBlank).prefix { !isBlank($0) }
        guard ["up", "down"].contains(String(String.UnicodeScalarView(word))) else { return nil }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// A file's bytes with every line break made `\n`, and where each of those bytes came from.
    private struct Normalized {
        /// The bytes, breaks made `\n`.
        var bytes: [UInt8]
        /// The file's own bytes, and the offset in them of each of ``bytes`` (and of its end):
        /// nil when the file had no other break.
        var original: (bytes: [UInt8], offsets: [Int])?

        /// The section at `range` of ``bytes``: the file's own text there, trimmed, and the
        /// normalized text when it differs.
        func section(_ range: Range<Int>, line: Int, inTransaction: Bool) -> Section {
            let normalized = MigrationSections.trimmed(bytes[range])
            guard let (file, offsets) = original else { return Section(sql: normalized, line: line, inTransaction: inTransaction) }
            let sql = MigrationSections.trimmed(file[offsets[range.lowerBound]..<offsets[range.upperBound]])
            return Section(sql: sql, line: line, inTransaction: inTransaction, withNewlines: sql == normalized ? nil : normalized)
        }
    }

    /// The file's bytes with every line break made `\n`.
    /// - Throws: ``MigrationError`` for a NUL byte, with its line.
    private static func normalized(_ contents: String, file: String) throws -> Normalized {
        var contents = contents
        return try contents.withUTF8 { buffer in
            guard let base = buffer.baseAddress else { return Normalized(bytes: []) }
            if let found = memchr(base, 0, buffer.count) {
                let offset = UnsafeRawPointer(found) - UnsafeRawPointer(base)
                let line = 1 + UnsafeBufferPointer(rebasing: buffer[..<offset]).reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
                throw MigrationError(.invalidFile, "\(file):\(line): a NUL byte; PostgreSQL would stop reading there and apply only what comes before it")
            }
            // \v, \f, \r, and the first bytes of U+0085, U+2028 and U+2029.
            guard [0x0B, 0x0C, 0x0D, 0xC2, 0xE2].contains(where: { memchr(base, $0, buffer.count) != nil }) else { return Normalized(bytes: Array(buffer)) }
            return normalizingBreaks(buffer)
        }
    }

    private static func normalizingBreaks(_ bytes: UnsafeBufferPointer<UInt8>) -> Normalized {
        var text: [UInt8] = []
        var offsets: [Int] = []
        text.reserveCapacity(bytes.count)
        offsets.reserveCapacity(bytes.count + 1)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            var breakLength = 0
            if byte >= 0x0B, byte <= 0x0D {
                breakLength = byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
            } else if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] == 0x85 {
                breakLength = 2
            } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                breakLength = 3
            }
            text.append(breakLength > 0 ? 0x0A : byte)
            offsets.append(index)
            index += max(breakLength, 1)
        }
        offsets.append(bytes.count)
        guard text.count != bytes.count || !text.elementsEqual(bytes) else { return Normalized(bytes: text) }
        return Normalized(bytes: text, original: (Array(bytes), offsets))
    }

    private static func firstNonBlank(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> Int {
        var index = line.lowerBound
        while index < line.upperBound, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        return index
    }

    /// The bytes as text, without trailing white space.
    fileprivate static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }

    /// Whether `text` holds `byte` (found with `memchr`).
    static func contains(_ byte: UInt8, in text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, Int32(byte), bytes.count) != nil } ?? false }
    }
}

/// The lines of `\n`-separated bytes, each without its `\n`, found with `memchr`; text after
/// the last `\n` is a line too, even when empty.
struct LineSlices {
    let bytes: UnsafeBufferPointer<UInt8>
    private var start = 0
    private var done = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func next() -> Range<Int>? {
        guard !done else { return nil }
        guard let base = bytes.baseAddress, start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) else {
            done = true
            return start..<max(start, bytes.count)
        }
        let end = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        defer { start = end + 1 }
        return start..<end
    }
}
