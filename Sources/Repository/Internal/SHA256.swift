/// SHA-256 (FIPS 180-4), for migration checksums. Small and dependency-free; not for secrets.
///
/// Written over raw buffers with wrapping and masking operators only, so that a debug build —
/// how `swift run migrate` runs — hashes a megabyte in milliseconds, not a second.
enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The digest of `bytes` as 64 lowercase hex digits.
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        if let digest = bytes.withContiguousStorageIfAvailable(hex) { return digest }
        return Array(bytes).withUnsafeBufferPointer(hex)
    }

    /// The digest of the UTF-8 bytes of `text`.
    static func hex(_ text: String) -> String {
        var text = text
        return text.withUTF8(hex)
    }

    static func hex(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var state = State()
        defer { state.deallocate() }
        let whole = bytes.count / 64 * 64
        if let base = bytes.baseAddress {
            var offset = 0
            while offset < whole {
                state.compress(base + offset)
                offset += 64
            }
        }
        // The last partial block, 0x80, zeros and the length in bits: one or two blocks.
        var tail = [UInt8](repeating: 0, count: bytes.count - whole < 56 ? 64 : 128)
        for index in whole..<bytes.count { tail[index - whole] = bytes[index] }
        tail[bytes.count - whole] = 0x80
        let bitLength = UInt64(bytes.count) &* 8
        for index in 0..<8 { tail[tail.count - 1 - index] = UInt8(truncatingIfNeeded: bitLength &>> UInt64(index * 8)) }
        tail.withUnsafeBufferPointer { tail in
            state.compress(tail.baseAddress!)
            if tail.count == 128 { state.compress(tail.baseAddress! + 64) }
        }
        return state.hex
    }

    private struct State {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        let k = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)

        init() { k.initialize(from: SHA256.k, count: 64) }

        func deallocate() {
            w.deallocate()
            k.deallocate()
        }

        // Raw pointers, `while` loops and rotations written out, and no local declared inside
        // a loop: the operations are transparent, so even an unoptimized build runs them inline,
        // and it zeroes each local once per block rather than once per round.
        mutating func compress(_ block: UnsafePointer<UInt8>) {
            var i = 0
            var x: UInt32 = 0, y: UInt32 = 0, t1: UInt32 = 0, t2: UInt32 = 0
            while i < 16 {
                w[i] = UInt32(block[i &* 4]) &<< 24 | UInt32(block[i &* 4 &+ 1]) &<< 16 | UInt32(block[i &* 4 &+ 2]) &<< 8 | UInt32(block[i &* 4 &+ 3])
                i &+= 1
            }
            while i < 64 {
                x = w[i &- 15]
                y = w[i &- 2]
                w[i] = w[i &- 16] &+ ((x &>> 7 | x &<< 25) ^ (x &>> 18 | x &<< 14) ^ (x &>> 3))
                    &+ w[i &- 7] &+ ((y &>> 17 | y &<< 15) ^ (y &>> 19 | y &<< 13) ^ (y &>> 10))
                i &+= 1
            }
            var (a, b, c, d, e, f, g, hh) = h
            i = 0
            while i < 64 {
                t1 = hh &+ ((e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                t2 = ((a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10)) &+ ((a & b) ^ (a & c) ^ (b & c))
                hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
                i &+= 1
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
        }

        var hex: String {
            [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7].map { word in
                let digits = String(word, radix: 16)
                return String(repeating: "0", count: 8 - digits.count) + digits
            }.joined()
        }
    }
}
