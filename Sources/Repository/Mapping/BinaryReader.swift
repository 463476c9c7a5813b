/// Reads big-endian values from a slice of PostgreSQL's binary wire format.
struct BinaryReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    struct Truncated: Error {}

    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws(Truncated) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count >= size else { throw Truncated() }
        var value: T = 0
        for byte in bytes.prefix(size) { value = value << 8 | T(truncatingIfNeeded: byte) }
        bytes.removeFirst(size)
        return value
    }

    mutating func read(count: Int) throws(Truncated) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count >= count else { throw Truncated() }
        defer { bytes.removeFirst(count) }
        return bytes.prefix(count)
    }
}
