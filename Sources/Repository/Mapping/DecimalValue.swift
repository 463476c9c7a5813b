/// A decimal number as significant digits times a power of ten, so that two spellings of one
/// value (`1.50`, `1.5`, `15e-1`) compare equal and a conversion that lost a digit does not.
struct DecimalValue: Equatable {
    /// No leading or trailing zeros; empty for zero.
    var digits: [UInt8]
    /// The value is `digits × 10^exponent`.
    var exponent: Int
    var isNegative: Bool

    /// Parses `-12.3400`, `1e-05`, `1.5E+16`, `0`; nil for anything else (NaN, Infinity).
    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        isNegative = bytes.first == UInt8(ascii: "-")
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits: [UInt8] = [], fractionDigits = 0, seenPoint = false, seenDigit = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else if byte >= 0x30, byte <= 0x39 {
                digits.append(byte - 0x30)
                seenDigit = true
                if seenPoint { fractionDigits += 1 }
            } else {
                return nil
            }
        }
        guard seenDigit else { return nil }
        var exponent = 0
        if !bytes.isEmpty {
            guard let power = Int(String(decoding: bytes.dropFirst(), as: UTF8.self)) else { return nil }
            exponent = power
        }
        exponent -= fractionDigits
        let leading = digits.prefix { $0 == 0 }.count
        digits.removeFirst(leading)
        while digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            exponent = 0
            isNegative = false
        }
        self.digits = digits
        self.exponent = exponent
    }

    /// How many significant digits the value has.
    var significantDigits: Int { digits.count }

    /// The value as an integer's decimal text, when it has no fraction.
    var integerText: String? {
        guard exponent >= 0 else { return nil }
        if digits.isEmpty { return "0" }
        return (isNegative ? "-" : "") + String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
            + String(repeating: "0", count: exponent)
    }
}
