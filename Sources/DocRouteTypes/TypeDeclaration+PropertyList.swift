extension TypeDeclaration {
    /// Reads one entry of `UTExportedTypeDeclarations` / `UTImportedTypeDeclarations` as Foundation's
    /// property-list reader returns it (`[String: Any]`).
    ///
    /// Returns nil and appends an issue naming `file` and the key path when the entry is unusable;
    /// a bad optional value (a non-string extension, say) is reported and left out while the rest of
    /// the declaration is kept.
    public static func fromPropertyList(
        _ value: Any, origin: DeclarationOrigin, file: String?, keyPath: String,
        issues: inout [TypeCatalogIssue]
    ) -> TypeDeclaration? {
        guard let dictionary = value as? [String: Any] else {
            issues.append(TypeCatalogIssue(
                code: .invalidValue, inputFile: file, inputKey: keyPath,
                message: "expected a dictionary with UTTypeIdentifier, found \(PropertyListTypeName.of(value))"))
            return nil
        }
        guard let identifier = dictionary["UTTypeIdentifier"] as? String, !identifier.isEmpty else {
            let found = dictionary["UTTypeIdentifier"].map { " (found \(PropertyListTypeName.of($0)))" } ?? ""
            issues.append(TypeCatalogIssue(
                code: .missingIdentifier, inputFile: file, inputKey: "\(keyPath).UTTypeIdentifier",
                message: "the declaration has no UTTypeIdentifier string\(found); the declaration is skipped"))
            return nil
        }
        let conformsTo = stringList(dictionary["UTTypeConformsTo"], file: file, keyPath: "\(keyPath).UTTypeConformsTo", issues: &issues)
        var extensions: [String] = []
        var mimeTypes: [String] = []
        if let specification = dictionary["UTTypeTagSpecification"] {
            let tagPath = "\(keyPath).UTTypeTagSpecification"
            if let tags = specification as? [String: Any] {
                extensions = stringList(tags["public.filename-extension"], file: file, keyPath: "\(tagPath).public.filename-extension", issues: &issues)
                    .map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }
                mimeTypes = stringList(tags["public.mime-type"], file: file, keyPath: "\(tagPath).public.mime-type", issues: &issues)
            } else {
                issues.append(TypeCatalogIssue(
                    code: .invalidValue, inputFile: file, inputKey: tagPath,
                    message: "expected a dictionary of tag classes, found \(PropertyListTypeName.of(specification)); tags ignored"))
            }
        }
        var description = ""
        if let text = dictionary["UTTypeDescription"] {
            if let string = text as? String { description = string } else {
                issues.append(TypeCatalogIssue(
                    code: .invalidValue, inputFile: file, inputKey: "\(keyPath).UTTypeDescription",
                    message: "expected a string, found \(PropertyListTypeName.of(text)); ignored"))
            }
        }
        return TypeDeclaration(
            identifier: identifier, conformsTo: conformsTo, filenameExtensions: extensions,
            mimeTypes: mimeTypes, description: description, origin: origin)
    }

    /// Apple accepts a single string where an array of strings is expected; so do we.
    static func stringList(_ value: Any?, file: String?, keyPath: String, issues: inout [TypeCatalogIssue]) -> [String] {
        guard let value else { return [] }
        if let string = value as? String { return [string] }
        guard let array = value as? [Any] else {
            issues.append(TypeCatalogIssue(
                code: .invalidValue, inputFile: file, inputKey: keyPath,
                message: "expected an array of strings, found \(PropertyListTypeName.of(value)); ignored"))
            return []
        }
        var result: [String] = []
        for (index, element) in array.enumerated() {
            if let string = element as? String { result.append(string) } else {
                issues.append(TypeCatalogIssue(
                    code: .invalidValue, inputFile: file, inputKey: "\(keyPath)[\(index)]",
                    message: "expected a string, found \(PropertyListTypeName.of(element)); ignored"))
            }
        }
        return result
    }
}
