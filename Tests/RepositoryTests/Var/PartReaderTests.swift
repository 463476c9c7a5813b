import Foundation
@testable import Repository
import Testing

/// Sub-references read their part at its offset when the key path names a property stored
/// inline, through the key path otherwise: both must read what the key path reads, for every
/// kind of part and path.
@Suite("Var: reading a key path's part")
struct PartReaderTests {
    struct Inner: Equatable, Sendable {
        var flag = false
        var words = ["a", "b"]
    }

    enum Shape: Equatable, Sendable {
        case circle(radius: Double)
        case label(String)
    }

    struct Root: Equatable, Sendable {
        var id: Int64 = 7
        var name = "café"
        var inner = Inner()
        var pair = (x: Int8(1), y: "y")
        var shape = Shape.label("l")
        var any: any Sendable = 3
        var optional: Inner? = Inner(flag: true)
        var upper: String {
            get { name.uppercased() }
            set { name = newValue.lowercased() }
        }

        static func == (lhs: Root, rhs: Root) -> Bool {
            lhs.id == rhs.id && lhs.name == rhs.name && lhs.inner == rhs.inner && lhs.pair == rhs.pair && lhs.shape == rhs.shape
        }
    }

    final class Box {
        var count = 4
        var root = Root()
    }

    /// The reader's value equals the key path's, and it took the offset exactly when `inline`.
    func check<Root, Part: Equatable>(_ root: Root, _ keyPath: any KeyPath<Root, Part> & Sendable, inline: Bool,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
        let reader = PartReader(keyPath)
        #expect((reader.offset != nil) == inline, sourceLocation: sourceLocation)
        #expect(reader.read(root) == root[keyPath: keyPath], sourceLocation: sourceLocation)
    }

    @Test("stored properties, nested ones and tuple elements are read at their offsets; the rest through the key path")
    func eachKind() {
        var root = Root()
        root.name = String(repeating: "long text, not a small string ", count: 4)
        check(root, \Root.id, inline: true)
        check(root, \Root.name, inline: true)
        check(root, \Root.inner, inline: true)
        check(root, \Root.inner.words, inline: true)
        check(root, \Root.inner.flag, inline: true)
        check(root, \Root.pair.y, inline: true)
        check(root, \Root.shape, inline: true)
        check(root, \Root.optional, inline: true)
        check(root, \Root.upper, inline: false)
        check(root, \Root.optional?.flag, inline: false)
        check(root, \Root.inner.words.count, inline: false)
        check(Box(), \Box.count, inline: false)
        check(Box(), \Box.root.name, inline: false)
        check((1, "two", 3.0), \(Int, String, Double).1, inline: true)
        let any = PartReader(\Root.any)
        #expect(any.offset != nil && any.read(root) as? Int == 3)
    }

    @Test("a part read at its offset is a copy: it outlives the root, and changing it leaves the root as it was")
    func copies() {
        var root: Root? = Root(name: String(repeating: "x", count: 100), inner: Inner(words: (0..<100).map(String.init)))
        var words = PartReader(\Root.inner.words).read(root!)
        let name = PartReader(\Root.name).read(root!)
        root = nil
        words.append("more")
        #expect(words.count == 101 && words[99] == "99" && name.count == 100)
    }

    final class Target: Sendable {
        let value = 7
    }

    struct References {
        weak var weak: Target?
        unowned var unowned: Target
        unowned(unsafe) var unsafe: Target
        var function: (Int) -> Int = { $0 + 1 }
        var generic = Generic(value: { (x: Int) in x * 2 })
    }

    struct Generic<T> {
        var value: T
    }

    @Test("weak and unowned references and functions are read through the key path; a generic field holding a function at its offset")
    func referencesAndFunctions() {
        let target = Target()
        let references = References(weak: target, unowned: target, unsafe: target)
        let weak = PartReader(\References.weak), unowned = PartReader(\References.unowned)
        let unsafe = PartReader(\References.unsafe), function = PartReader(\References.function)
        let generic = PartReader(\References.generic.value)
        #expect(weak.offset == nil && weak.read(references) === target)
        #expect(unowned.offset == nil && unowned.read(references) === target)
        #expect(unsafe.offset == nil && unsafe.read(references) === target)
        #expect(function.offset == nil && function.read(references)(1) == 2)
        #expect(generic.offset != nil && generic.read(references)(3) == 6)
        withExtendedLifetime(target) {}
    }

    @Test("sub-references and their observers see each kind of part as the key path does")
    func throughVar() {
        let root = Var(Root())
        let name = root[\.name], words = root[\.inner.words], y = root[\.pair.y], upper = root[\.upper]
        let flag = root[\.optional][\.flag]
        let seen = Locked<[String]>([])
        let subscriptions = [
            name.observe { update in seen.withLock { $0.append("name \(update.old) -> \(update.new)") } },
            words.observe { update in seen.withLock { $0.append("words \(update.new)") } },
            y.observe { update in seen.withLock { $0.append("y \(update.new)") } },
            upper.observe { update in seen.withLock { $0.append("upper \(update.new)") } },
            flag.observe { update in seen.withLock { $0.append("flag \(String(describing: update.new))") } },
        ]
        root.value.name = "cafe\u{301}"  // another spelling of the same text: a change of its bytes
        root.value.inner.words.append("c")
        root.value.pair.y = "z"
        root.value.optional = nil
        root.value.id = 8  // no observed part changes
        #expect(name.value == "cafe\u{301}" && words.value == ["a", "b", "c"] && y.value == "z" && flag.value == nil)
        #expect(seen.withLock { $0 } == ["name café -> cafe\u{301}", "upper CAFÉ", "words [\"a\", \"b\", \"c\"]", "y z", "flag nil"])
        withExtendedLifetime(subscriptions) {}
    }
}
