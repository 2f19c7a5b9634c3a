/// Something in a manifest that was not used as written, and what was done instead.
///
/// Launch Services uses what it can of an Info.plist: an unknown role skips one document type, a
/// string stands for a one-element array, and so on. docroute does the same and says so, naming the
/// file and the key path, so an author can fix the manifest while the handler keeps working.
public struct ManifestWarning: Sendable, Hashable, CustomStringConvertible {
    /// Stable codes, for tests and for tools that filter. Type declaration problems keep the
    /// code of their ``DocRouteTypes/TypeCatalogIssue`` (`unknown-parent`, `system-type-redefined`, …).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A `CFBundleTypeRole` Launch Services does not open documents with (`QLGenerator`,
        /// `MDImporter`): that document type is skipped.
        public static let unknownRole = Code(rawValue: "unknown-role")
        /// An `LSHandlerRank` other than Owner, Default, Alternate, None: that document type is skipped.
        public static let unknownRank = Code(rawValue: "unknown-rank")
        /// A single value where Apple documents an array: read as a one-element array.
        public static let oneElementArray = Code(rawValue: "one-element-array")
        /// White space around a value: trimmed.
        public static let whitespaceTrimmed = Code(rawValue: "whitespace-trimmed")
        /// A value of the wrong property-list type: ignored.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A value that cannot be used (an invalid URL scheme, an empty string): ignored.
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// An Xcode build variable such as `$(PRODUCT_BUNDLE_IDENTIFIER)` that was never expanded: ignored.
        public static let buildVariable = Code(rawValue: "build-variable")
        /// A key docroute does not read that is a letter or two away from one it does
        /// (`CFBundleDocumentType`): most likely a misspelling, so what it holds is not used.
        public static let misspelledKey = Code(rawValue: "misspelled-key")
        /// The handler claims no document type and no URL scheme that it opens: it is never chosen.
        public static let claimsNothing = Code(rawValue: "claims-nothing")
        /// Another manifest declares this handler's bundle identifier and was refused; this one,
        /// loaded before, keeps serving.
        public static let duplicateIdentifier = Code(rawValue: "duplicate-identifier")
    }

    public var code: Code
    /// The manifest file.
    public var file: String
    /// Where in the property list, e.g. `CFBundleDocumentTypes[2].CFBundleTypeRole`.
    public var keyPath: String
    /// What was wrong and what was done about it.
    public var message: String

    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
