extension TypeCatalog {
    /// A stable handle for a declared type within this catalog (its position), for callers that
    /// look the same types up millions of times: handle lookups allocate nothing.
    public func typeIndex(of identifier: String) -> Int? {
        index(of: identifier)
    }

    /// The ancestors of the type with this handle, nearest first, as handles.
    public func ancestorIndexes(ofTypeAt index: Int) -> [Int] {
        entries[index].ancestors
    }

    /// The identifier of the type with this handle, as declared.
    public func identifier(ofTypeAt index: Int) -> String {
        entries[index].declaration.identifier
    }
}
