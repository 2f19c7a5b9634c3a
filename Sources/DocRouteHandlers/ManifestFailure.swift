/// A manifest that did not load, kept so status output can show it as a failed entry.
public struct ManifestFailure: Sendable, Hashable {
    public var file: String
    /// The bundle identifier, when the file got far enough to name one.
    public var bundleIdentifier: String?
    public var error: ManifestError

    public init(file: String, bundleIdentifier: String? = nil, error: ManifestError) {
        self.file = file
        self.bundleIdentifier = bundleIdentifier
        self.error = error
    }
}
