/// A PostgreSQL `inet` or `cidr`: an IPv4 or IPv6 address and a network prefix length.
///
/// Its text is PostgreSQL's `inet` form (`192.168.0.1/24`, `2001:db8::1`: the prefix left out
/// when it covers the whole address); as JSON it is that text. A `cidr` column accepts only
/// values whose host bits are zero (`10.1.0.0/16`).
///
/// ```swift
/// let office = PostgresInet("192.168.0.1/24")!
/// ```
public struct PostgresInet: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The address: 4 bytes (IPv4) or 16 (IPv6), network order.
    public let address: [UInt8]
    /// The network prefix length: up to 32 (IPv4) or 128 (IPv6).
    public let prefixLength: UInt8

    /// An address and prefix; nil unless `address` has 4 or 16 bytes and `prefixLength` fits it.
    public init?(address: [UInt8], prefixLength: UInt8? = nil) {
        guard address.count == 4 || address.count == 16 else { return nil }
        let maximum = UInt8(address.count * 8)
        guard (prefixLength ?? maximum) <= maximum else { return nil }
        self.address = address
        self.prefixLength = prefixLength ?? maximum
    }

    /// Whether the address is IPv6.
    public var isIPv6: Bool { address.count == 16 }

    /// As PostgreSQL prints an `inet`: `192.168.0.1/24`, `::ffff:1.2.3.4`, `2001:db8::1`.
    public var description: String { text(alwaysWithPrefix: false) }

    /// The text with or without a prefix covering the whole address (a `cidr` always has one).
    func text(alwaysWithPrefix: Bool) -> String {
        let host = isIPv6 ? Self.ipv6Text(address) : address.map(String.init).joined(separator: ".")
        return alwaysWithPrefix || Int(prefixLength) != address.count * 8 ? "\(host)/\(prefixLength)" : host
    }

    /// RFC 5952 as PostgreSQL writes it: the longest run of two or more zero groups as `::`,
    /// and an IPv4-mapped or -compatible address with its last 32 bits dotted.
    static func ipv6Text(_ bytes: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var best = (start: -1, length: 0), run = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                if run.start < 0 { run = (index, 0) }
                run.length += 1
                if run.length > best.length { best = run }
            } else {
                run = (-1, 0)
            }
        }
        if best.length < 2 { best = (-1, 0) }
        let embedsIPv4 = best.start == 0 && (best.length == 6 || (best.length == 5 && groups[5] == 0xffff))
        var text = ""
        var index = 0
        while index < 8 {
            if index == best.start {
                text += index == 0 ? "::" : ":"
                index += best.length
                continue
            }
            if embedsIPv4 && index == 6 {
                text += bytes[12...].map(String.init).joined(separator: ".")
                break
            }
            text += String(groups[index], radix: 16) + (index < 7 ? ":" : "")
            index += 1
        }
        return text
    }


}

extension PostgresInet: PostgresTextCoded {
    /// `inet`.
    public static var postgresTypeName: String { "inet" }
}

extension PostgresInet: CellDecodable {
    init(cell: Cell) throws {
        guard cell.type == .inet || cell.type == .cidr else { throw cell.error(Self.self, .typeMismatch) }
        guard let (value, _) = Self.read(try cell.nonNull(Self.self)) else { throw cell.error(Self.self, .invalidData("malformed address")) }
        self = value
    }

    /// The binary form: family (2 IPv4, 3 IPv6), prefix length, is-cidr flag, address length, address.
    static func read(_ bytes: ArraySlice<UInt8>) -> (PostgresInet, isCIDR: Bool)? {
        let raw = Array(bytes)
        guard raw.count >= 4, raw.count == 4 + Int(raw[3]),
              let value = PostgresInet(address: Array(raw[4...]), prefixLength: raw[1]) else { return nil }
        return (value, raw[2] != 0)
    }
}
