import Foundation

/// Floating-point numbers as PostgreSQL prints them (`extra_float_digits` 1, its default): the
/// shortest digits that read back as the same value, in plain notation when the decimal
/// exponent is from -4 to 14 (`real`: to 5), else as `1.5e+16`; `NaN`, `Infinity`, `-0`.
enum FloatText {
    static func postgres(_ value: Double) -> String { text(value, shortest: value.magnitude.description, maximumExponent: 14) }

    static func postgres(_ value: Float) -> String {
        text(Double(value), shortest: value.magnitude.description, maximumExponent: 5)
    }

    private static func text(_ value: Double, shortest: String, maximumExponent: Int) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        let sign = value.sign == .minus ? "-" : ""
        if value == 0 { return sign + "0" }
        guard let decimal = DecimalValue(shortest) else { return sign + shortest }
        let digits = String(decoding: decimal.digits.map { $0 + 0x30 }, as: UTF8.self)
        let exponent = decimal.exponent + digits.count - 1  // of the first digit
        if exponent < -4 || exponent > maximumExponent {
            let mantissa = digits.count > 1 ? String(digits.prefix(1)) + "." + digits.dropFirst() : digits
            let power = String(exponent.magnitude)
            return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (power.count < 2 ? "0" + power : power)
        }
        if exponent < 0 { return sign + "0." + String(repeating: "0", count: -exponent - 1) + digits }
        if exponent + 1 >= digits.count { return sign + digits + String(repeating: "0", count: exponent + 1 - digits.count) }
        return sign + digits.prefix(exponent + 1) + "." + digits.dropFirst(exponent + 1)
    }

    /// A double from PostgreSQL's text (`NaN`, `Infinity`, `-Infinity`, `1e+16`).
    static func double(_ text: Substring) -> Double? {
        switch text.trimmingCharacters(in: .whitespaces) {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        case let other: Double(other)
        }
    }
}
