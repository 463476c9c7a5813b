/// Reads the part a key path names out of a root value: at the part's offset when the key path
/// names a property stored inline (a stored property of a struct, or a chain of them), through
/// the key path otherwise (a computed property, a class's property, an optional chain).
///
/// A sub-reference reads its part on every read and twice on every update its observers are
/// told of. Through a key path held as a value the runtime walks the path and looks up the
/// part's type on each read; at a known offset the read is a copy of the part.
@usableFromInline struct PartReader<Root, Part>: Sendable {
    @usableFromInline let keyPath: any KeyPath<Root, Part> & Sendable
    /// Where the part sits in the root's storage, if it is stored inline.
    @usableFromInline let offset: Int?

    @inlinable init(_ keyPath: any KeyPath<Root, Part> & Sendable) {
        self.keyPath = keyPath
        // Only where a load there is aligned: a field of a C struct declared `packed` may not be.
        offset = MemoryLayout<Root>.offset(of: keyPath as PartialKeyPath<Root>).flatMap { offset in
            offset % MemoryLayout<Part>.alignment == 0 && MemoryLayout<Root>.alignment >= MemoryLayout<Part>.alignment ? offset : nil
        }
    }

    /// The part of `root`.
    @inlinable func read(_ root: Root) -> Part {
        guard let offset else { return root[keyPath: keyPath] }
        // `offset(of:)` promises an initialized `Part` there; `load` copies it out.
        return withUnsafePointer(to: root) { UnsafeRawPointer($0).load(fromByteOffset: offset, as: Part.self) }
    }
}
