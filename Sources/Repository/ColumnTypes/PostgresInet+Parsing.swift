extension PostgresInet {
    /// Reads `192.168.0.1`, `10.0.0.0/8`, `2001:db8::1/64`, `::ffff:1.2.3.4`; nil otherwise.
    public init?(_ description: String) {
        let parts = description.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let host = String(parts[0])
        guard let address = host.contains(":") ? Self.ipv6(host) : Self.ipv4(host) else { return nil }
        var prefix: UInt8?
        if parts.count == 2 {
            guard let length = UInt8(parts[1]) else { return nil }
            prefix = length
        }
        self.init(address: address, prefixLength: prefix)
    }

    private static func ipv4(_ text: String) -> [UInt8]? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        let bytes = octets.compactMap { $0.count <= 3 && $0.allSatisfy(\.isASCII) ? UInt8($0) : nil }
        return bytes.count == 4 ? bytes : nil
    }

    private static func ipv6(_ text: String) -> [UInt8]? {
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = ipv4(String(piece)) else { return nil }
                    bytes += v4
                } else {
                    guard (1...4).contains(piece.count), let group = UInt16(piece, radix: 16) else { return nil }
                    bytes += [UInt8(group >> 8), UInt8(group & 0xff)]
                }
            }
            return bytes
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
