/// Apple's system declarations plus the project's additions, parsed once from the embedded table.
enum SystemTypes {
    static let declarations: [TypeDeclaration] = {
        var result: [TypeDeclaration] = []
        result.reserveCapacity(SystemTypeTable.count)
        for line in SystemTypeTable.text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 4 else { continue }
            func list(_ field: Substring) -> [String] {
                field.split(separator: ",").map(String.init)
            }
            result.append(TypeDeclaration(
                identifier: String(fields[0]), conformsTo: list(fields[1]),
                filenameExtensions: list(fields[2]), mimeTypes: list(fields[3]),
                description: fields.count > 4 ? String(fields[4]) : "", origin: .system))
        }
        return result
    }()

    /// The catalog of system types alone, built once.
    static let catalog: TypeCatalog = TypeCatalogBuilder.withSystemTypes().build()
}

extension TypeCatalog {
    /// The catalog of Apple's system types and the built-in additions, with no handler declarations.
    public static var system: TypeCatalog { SystemTypes.catalog }
}
