import DocRouteTypes
import Foundation

extension ManifestReader {
    /// Reads the keys of one parsed property list, collecting warnings as it goes.
    struct Reader {
        let file: String
        var typeIssues: [TypeCatalogIssue] = []
        var warnings: [ManifestWarning] = []

        init(file: String) { self.file = file }

        func fail(_ code: ManifestError.Code, _ keyPath: String, _ message: String) -> ManifestError {
            ManifestError(code: code, inputFile: file, inputKey: keyPath.isEmpty ? nil : keyPath, message: message)
        }

        func wrongType(_ keyPath: String, expected: String, found: Any) -> ManifestError {
            fail(.wrongType, keyPath, "expected \(expected), found \(PropertyListTypeName.of(found))")
        }

        mutating func manifest(from root: Any) throws -> HandlerManifest {
            guard let plist = root as? [String: Any] else {
                throw fail(.wrongType, "", "the top level must be a dictionary, found \(PropertyListTypeName.of(root))")
            }
            let bundleIdentifier = try bundleIdentifier(plist)
            var manifest = HandlerManifest(bundleIdentifier: bundleIdentifier, file: file)
            warnAboutMisspelledKeys(plist, .topLevel, at: "")
            manifest.name = string(plist, "CFBundleName", at: "")

            for entry in dictionaries(plist, "CFBundleDocumentTypes") {
                if let claim = documentType(entry.value, at: entry.keyPath + ".") { manifest.documentTypes.append(claim) }
            }
            for entry in dictionaries(plist, "CFBundleURLTypes") {
                let path = entry.keyPath + "."
                warnAboutMisspelledKeys(entry.value, .urlType, at: path)
                let schemes = withoutBuildVariables(strings(entry.value, "CFBundleURLSchemes", at: path) ?? [], what: "URL scheme")
                    .filter { scheme in
                        guard !URLSchemeClaim.isValidScheme(scheme.value) else { return true }
                        warn(.invalidValue, scheme.keyPath,
                             "'\(scheme.value)' is not a URL scheme (RFC 3986: a letter, then letters, digits, '+', '-' and '.'); this scheme is left out")
                        return false
                    }
                manifest.urlTypes.append(URLSchemeClaim(
                    name: string(entry.value, "CFBundleURLName", at: path), schemes: schemes.map { $0.value.lowercased() }))
            }
            for (key, origin) in [("UTExportedTypeDeclarations", DeclarationOrigin.exported(bundleIdentifier: bundleIdentifier)),
                                  ("UTImportedTypeDeclarations", DeclarationOrigin.imported(bundleIdentifier: bundleIdentifier))] {
                guard plist[key] != nil else { continue }
                // Element by element, so a declaration that is not a dictionary is reported by the catalog's reader.
                let elements: [Located<Any>]
                switch plist[key] {
                case let array as [Any]: elements = array.enumerated().map { Located(keyPath: "\(key)[\($0.offset)]", value: $0.element) }
                case let single as [String: Any]:
                    warn(.oneElementArray, key, "a dictionary where an array of dictionaries belongs; read as a one-element array")
                    elements = [Located(keyPath: key, value: single)]
                case let other?:
                    warn(.wrongType, key, "expected an array of dictionaries, found \(PropertyListTypeName.of(other)); ignored")
                    elements = []
                case nil: elements = []
                }
                for element in elements {
                    var normalized = element.value
                    if let dictionary = element.value as? [String: Any] {
                        guard let usable = declaration(dictionary, at: element.keyPath) else { continue }
                        normalized = usable
                    }
                    guard let declaration = TypeDeclaration.fromPropertyList(
                            normalized, origin: origin, file: file, keyPath: element.keyPath, issues: &typeIssues)
                    else { continue }
                    if case .exported = origin { manifest.exportedTypes.append(declaration) } else { manifest.importedTypes.append(declaration) }
                    manifest.declarationKeyPaths.append(element.keyPath)
                }
            }
            try readLinuxKeys(plist, into: &manifest)
            return manifest
        }

        /// `CFBundleIdentifier`: the one key a manifest cannot do without.
        mutating func bundleIdentifier(_ plist: [String: Any]) throws -> String {
            guard let value = plist["CFBundleIdentifier"] else {
                throw fail(.missingKey, "CFBundleIdentifier", "no CFBundleIdentifier; every handler needs one (reverse-DNS, e.g. com.example.viewer)")
            }
            guard let raw = value as? String else { throw wrongType("CFBundleIdentifier", expected: "a string", found: value) }
            let identifier = trimmed(raw, at: "CFBundleIdentifier")
            guard !identifier.isEmpty else {
                throw fail(.missingKey, "CFBundleIdentifier", "CFBundleIdentifier is empty; every handler needs one (reverse-DNS, e.g. com.example.viewer)")
            }
            let variables = Self.buildVariables(in: identifier)
            guard variables.isEmpty else {
                throw fail(.buildVariable, "CFBundleIdentifier",
                           "'\(identifier)' holds the Xcode build variable \(variables.joined(separator: ", ")), which Xcode expands when it builds the app: this is the project's Info.plist template, not the built app's; install the Info.plist from the built .app, or write the bundle identifier in (e.g. com.example.viewer)")
            }
            guard Self.isValidBundleIdentifier(identifier) else {
                throw fail(.invalidValue, "CFBundleIdentifier", "'\(identifier)' is not a bundle identifier (letters, digits, '-' and '.', as Apple allows)")
            }
            return identifier
        }

        /// One entry of `CFBundleDocumentTypes`; nil when its role or rank is one Launch Services
        /// does not open documents with, so the entry is skipped (Quick Look's `QLGenerator`).
        mutating func documentType(_ entry: [String: Any], at path: String) -> DocumentTypeClaim? {
            var claim = DocumentTypeClaim()
            var usable = true
            warnAboutMisspelledKeys(entry, .documentType, at: path)
            claim.name = string(entry, "CFBundleTypeName", at: path)
            if let value = entry["CFBundleTypeRole"] {
                if let role = named(HandlerRole.self, value, at: path + "CFBundleTypeRole") {
                    claim.role = role
                } else {
                    let found = (value as? String).map { "role '\($0.trimmingCharacters(in: .whitespacesAndNewlines))'" } ?? PropertyListTypeName.of(value)
                    warn(.unknownRole, path + "CFBundleTypeRole",
                         "\(found) is not one Launch Services opens documents with (Editor, Viewer, Shell or None)\(Self.roleHint(value)); this document type is skipped")
                    usable = false
                }
            }
            if let value = entry["LSHandlerRank"] {
                if let rank = named(HandlerRank.self, value, at: path + "LSHandlerRank") {
                    claim.rank = rank
                } else {
                    let found = (value as? String).map { "rank '\($0.trimmingCharacters(in: .whitespacesAndNewlines))'" } ?? PropertyListTypeName.of(value)
                    warn(.unknownRank, path + "LSHandlerRank", "\(found) is not Owner, Default, Alternate or None; this document type is skipped")
                    usable = false
                }
            }
            guard usable else { return nil }
            let contentTypes = strings(entry, "LSItemContentTypes", at: path)
            claim.contentTypes = withoutBuildVariables(contentTypes ?? [], what: "type").map(\.value)
            claim.iconFiles = (strings(entry, "CFBundleTypeIconFiles", at: path) ?? []).map(\.value)
            if let package = entry["LSTypeIsPackage"] {
                if let flag = package as? Bool {
                    claim.isPackage = flag
                } else {
                    warn(.wrongType, path + "LSTypeIsPackage", "expected a boolean, found \(PropertyListTypeName.of(package)); read as false")
                }
            }
            if contentTypes == nil {
                // Apple reads the legacy keys only when LSItemContentTypes is absent.
                claim.legacyExtensions = (strings(entry, "CFBundleTypeExtensions", at: path) ?? [])
                    .map { $0.value.hasPrefix(".") ? String($0.value.dropFirst()) : $0.value }
                claim.legacyMIMETypes = (strings(entry, "CFBundleTypeMIMETypes", at: path) ?? []).map(\.value)
            }
            return claim
        }

        /// A role or rank name, compared without case after trimming; nil when it is none of them.
        mutating func named<Name: RawRepresentable & CaseIterable>(_: Name.Type, _ value: Any, at keyPath: String) -> Name? where Name.RawValue == String {
            guard let raw = value as? String else { return nil }
            let name = trimmed(raw, at: keyPath).lowercased()
            return Name.allCases.first { $0.rawValue.lowercased() == name }
        }

        /// What a role Launch Services skips is for, when it is a well-known one.
        static func roleHint(_ value: Any) -> String {
            switch (value as? String)?.trimmingCharacters(in: .whitespacesAndNewlines) {
            case "QLGenerator": " (it names the types a Quick Look generator previews)"
            case "MDImporter": " (it names the types a Spotlight importer indexes)"
            default: ""
            }
        }

        /// A type declaration's dictionary with its identifiers and tags trimmed and lone strings made
        /// arrays, each with a warning; nil (with a warning) when its identifier is an unexpanded
        /// build variable. Other problems are left to ``TypeDeclaration/fromPropertyList``.
        mutating func declaration(_ dictionary: [String: Any], at keyPath: String) -> [String: Any]? {
            var result = dictionary
            let path = keyPath + "."
            warnAboutMisspelledKeys(dictionary, .typeDeclaration, at: path)
            if let identifier = dictionary["UTTypeIdentifier"] as? String {
                let value = trimmed(identifier, at: path + "UTTypeIdentifier")
                let variables = Self.buildVariables(in: value)
                guard variables.isEmpty else {
                    warn(.buildVariable, path + "UTTypeIdentifier",
                         "'\(value)' holds the Xcode build variable \(variables.joined(separator: ", ")), never expanded; this declaration is skipped")
                    return nil
                }
                result["UTTypeIdentifier"] = value
            }
            if dictionary["UTTypeConformsTo"] != nil {
                result["UTTypeConformsTo"] = (strings(dictionary, "UTTypeConformsTo", at: path) ?? []).map(\.value)
            }
            if var tags = dictionary["UTTypeTagSpecification"] as? [String: Any] {
                let tagPath = path + "UTTypeTagSpecification."
                warnAboutMisspelledKeys(tags, .tagSpecification, at: tagPath)
                for tagClass in ["public.filename-extension", "public.mime-type"] where tags[tagClass] != nil {
                    // Apple documents each tag as "a string or an array of strings": no warning for a string.
                    tags[tagClass] = (strings(tags, tagClass, at: tagPath, stringIsDocumented: true) ?? []).map(\.value)
                }
                result["UTTypeTagSpecification"] = tags
            }
            return result
        }

        /// docroute's own keys. They decide who receives documents and where, so a value that cannot
        /// be used fails the manifest instead of falling back to a default the author did not mean.
        mutating func readLinuxKeys(_ plist: [String: Any], into manifest: inout HandlerManifest) throws {
            if let user = plist["DocRouteUser"] {
                if let raw = user as? String {
                    let name = trimmed(raw, at: "DocRouteUser")
                    guard !name.isEmpty else {
                        throw fail(.invalidValue, "DocRouteUser", "the user is empty; name a user or a numeric uid, or leave the key out for root")
                    }
                    manifest.user = UInt32(name).map(HandlerUser.uid) ?? .name(name)
                } else if !(user is Bool), let number = user as? Int, number >= 0, number <= Int(UInt32.max) {
                    manifest.user = .uid(UInt32(number))
                } else {
                    throw fail(.wrongType, "DocRouteUser", "expected a user name or a numeric uid, found \(PropertyListTypeName.of(user))")
                }
            }
            if let value = plist["DocRouteLaunchCommand"] {
                var command: [String]
                switch value {
                case let single as String:
                    warn(.oneElementArray, "DocRouteLaunchCommand", "a string where an array belongs; read as the program alone, with no arguments")
                    command = [single]
                case let array as [Any]:
                    command = []
                    for (index, element) in array.enumerated() {
                        guard let word = element as? String else {
                            throw wrongType("DocRouteLaunchCommand[\(index)]", expected: "a string", found: element)
                        }
                        command.append(word)
                    }
                default:
                    throw wrongType("DocRouteLaunchCommand", expected: "an array of strings", found: value)
                }
                if let program = command.first { command[0] = trimmed(program, at: "DocRouteLaunchCommand[0]") }
                guard let program = command.first, !program.isEmpty else {
                    throw fail(.invalidValue, "DocRouteLaunchCommand", "the command is empty; give the program and its arguments, e.g. [\"/usr/bin/viewer\", \"--socket\"]")
                }
                manifest.launchCommand = command
            }
            if let value = plist["DocRouteContainer"] {
                guard let raw = value as? String else { throw wrongType("DocRouteContainer", expected: "a string", found: value) }
                let container = trimmed(raw, at: "DocRouteContainer")
                guard container.hasPrefix("/") else {
                    throw fail(.invalidValue, "DocRouteContainer", "'\(container)' must be an absolute path")
                }
                manifest.container = container
            }
            manifest.inboxRetentionDays = inboxRetentionDays(plist)
        }

        static func isValidBundleIdentifier(_ identifier: String) -> Bool {
            identifier.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F
            } && !identifier.hasPrefix(".") && !identifier.hasSuffix(".") && !identifier.contains("..")
        }
    }
}
