import Foundation
import PropertyBased
@testable import Repository
import Testing

/// ``ExactMerge`` on random values of many types: a merged value holds the chosen properties
/// of one side and every other one of the other, to the bit.
@Suite("Exact merge: random values of many types")
struct ExactMergePropertyTests {
    struct Inner: Codable, Equatable, Sendable {
        var x: Double
        var label: String
    }

    enum Kind: String, Codable, Sendable { case small, large }

    struct Row: Codable, Sendable {
        var double: Double
        var float: Float
        var date: Date
        var decimal: Decimal
        var int64: Int64
        var uint64: UInt64
        var text: String
        var bytes: Data
        var flag: Bool
        var uuid: UUID
        var doubles: [Double]
        var inner: Inner?
        var kind: Kind
        var optional: Int?

        static let properties = ["double", "float", "date", "decimal", "int64", "uint64", "text", "bytes", "flag", "uuid", "doubles", "inner", "kind", "optional"]

        /// A row made from 64-bit words: floats from their bits (NaN payloads, infinities,
        /// subnormals, -0 included), integers at their extremes, text with any scalar.
        init(_ w: [UInt64]) {
            double = Double(bitPattern: w[0])
            float = Float(bitPattern: UInt32(truncatingIfNeeded: w[1]))
            date = Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: w[2]) % 400_000_000_000) / 1_000_003)
            decimal = Decimal(string: "\(w[3] % 100_000_000_000_000_000).\(w[4] % 1_000_000_000_000_000_000)")!
            int64 = w[5].isMultiple(of: 7) ? .max : Int64(bitPattern: w[5])
            uint64 = w[6]
            text = String(String.UnicodeScalarView((0..<Int(w[7] % 12)).compactMap { Unicode.Scalar(UInt32(truncatingIfNeeded: w[8] >> ($0 * 5)) % 0x11_0000) }))
            bytes = Data((0..<Int(w[9] % 20)).map { UInt8(truncatingIfNeeded: w[10] >> ($0 % 8 * 8)) })
            flag = w[11].isMultiple(of: 2)
            uuid = UUID(uuid: (UInt8(truncatingIfNeeded: w[12]), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(truncatingIfNeeded: w[13])))
            doubles = (0..<Int(w[14] % 4)).map { Double(bitPattern: w[15] &+ UInt64($0)) }
            inner = w[16].isMultiple(of: 3) ? nil : Inner(x: Double(bitPattern: w[17]), label: String(w[16]))
            kind = w[18].isMultiple(of: 2) ? .small : .large
            optional = w[19].isMultiple(of: 2) ? nil : Int(truncatingIfNeeded: w[19])
        }

        /// Each property, compared to the bit.
        func same(_ other: Row, _ property: String) -> Bool {
            switch property {
            case "double": double.bitPattern == other.double.bitPattern
            case "float": float.bitPattern == other.float.bitPattern
            case "date": date.timeIntervalSinceReferenceDate.bitPattern == other.date.timeIntervalSinceReferenceDate.bitPattern
            case "decimal": decimal == other.decimal
            case "int64": int64 == other.int64
            case "uint64": uint64 == other.uint64
            case "text": text.unicodeScalars.elementsEqual(other.text.unicodeScalars)
            case "bytes": bytes == other.bytes
            case "flag": flag == other.flag
            case "uuid": uuid == other.uuid
            case "doubles": doubles.map(\.bitPattern) == other.doubles.map(\.bitPattern)
            case "inner": inner?.x.bitPattern == other.inner?.x.bitPattern && inner?.label == other.inner?.label
            case "kind": kind == other.kind
            default: optional == other.optional
            }
        }
    }

    static let words = Gen.uint64().array(of: 20...20)

    @Test("replacing: chosen properties from the source, every other bit from the target")
    func replacing() async {
        await propertyCheck(count: 2000, input: Self.words, Self.words, Gen.int(in: 0...(1 << 14 - 1))) { a, b, mask in
            let (target, source) = (Row(a), Row(b))
            let chosen = Set(Row.properties.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
            let merged = try ExactMerge.replacing(chosen, in: target, from: source)
            for property in Row.properties {
                #expect(merged.same(chosen.contains(property) ? source : target, property), "\(property) of \(chosen.sorted())")
            }
        }
    }

    @Test("restoring: what a step changed goes back where nobody changed it since; the rest is left and named")
    func restoring() async {
        await propertyCheck(count: 1000, input: Self.words, Self.words, Self.words, Gen.int(in: 0...(1 << 28 - 1))) { a, b, c, mask in
            let before = Row(a)
            // The step changed some properties; someone else then changed some of them, and others.
            var after = before, current = before
            let (stepChanged, othersChanged) = (Set(Row.properties.indices.filter { mask & (1 << $0) != 0 }),
                                                Set(Row.properties.indices.filter { mask & (1 << ($0 + 14)) != 0 }))
            Self.copy(stepChanged, from: Row(b), into: &after)
            current = after
            Self.copy(othersChanged, from: Row(c), into: &current)
            let (restored, conflicts) = ExactMerge.restoring(from: before, changedTo: after, in: current)
            for (index, property) in Row.properties.enumerated() {
                let stepMoved = !after.same(before, property), theyMoved = !current.same(after, property)
                switch (stepMoved, theyMoved) {
                case (true, false): #expect(restored.same(before, property), "\(property) not taken back")
                case (true, true):
                    #expect(restored.same(current, property) && (conflicts.contains(property) || current.same(before, property)), "\(property)")
                default: #expect(restored.same(current, property), "\(property) moved though the step left it (\(index))")
                }
            }
        }
    }

    private static func copy(_ indices: Set<Int>, from source: Row, into target: inout Row) {
        let chosen = Set(indices.map { Row.properties[$0] })
        if let merged = try? ExactMerge.replacing(chosen, in: target, from: source) { target = merged }
    }
}
