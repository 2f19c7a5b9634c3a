extension TypeEngine {
    /// `mimeDatabase` with rules of highest precedence made from the catalog's exported and
    /// imported declarations that name both filename extensions and MIME types: each extension
    /// becomes a `*.ext` glob of weight 50 for the first MIME type, so a handler's type joins
    /// detection as shared-mime-info's own types do (the content still chooses between it and
    /// others claiming the extension). A declared MIME type the database has no parents for gets
    /// the MIME types of its declared parents, so subclass tests work for it too.
    static func addingDeclaredTypes(of catalog: TypeCatalog, to mimeDatabase: MIMEDatabase) -> MIMEDatabase {
        var globs: [MIMEDatabaseLayer.GlobRule] = []
        var subclasses: [MIMEDatabaseLayer.TypePair] = []
        for entry in catalog.entries where entry.declaration.origin != .system {
            let declaration = entry.declaration
            guard let mimeType = declaration.mimeTypes.first.map(TypeCatalog.normalizedMIMEType),
                  mimeType.contains("/") else { continue }
            for filenameExtension in declaration.filenameExtensions where !filenameExtension.isEmpty {
                globs.append(MIMEDatabaseLayer.GlobRule(
                    weight: 50, type: mimeType, pattern: "*." + filenameExtension.lowercased(),
                    caseSensitive: false, deletesEarlierGlobs: false))
            }
            let canonical = mimeDatabase.canonical(mimeType)
            guard mimeDatabase.explicitParents[canonical] == nil else { continue }
            for parent in entry.parents {
                guard let parentMIMEType = catalog.entries[parent].declaration.mimeTypes.first else { continue }
                let pair = MIMEDatabaseLayer.TypePair(first: mimeType, second: TypeCatalog.normalizedMIMEType(parentMIMEType))
                if pair.first != pair.second, !subclasses.contains(pair) { subclasses.append(pair) }
            }
        }
        guard !globs.isEmpty || !subclasses.isEmpty else { return mimeDatabase }
        return mimeDatabase.adding(globs: globs, subclasses: subclasses)
    }
}
