/// The parsed contents of one shared-mime-info directory (one `<MIME>` in the spec's terms).
///
/// A ``MIMEDatabase`` is built from layers given in precedence order: the first layer is the
/// user's `$XDG_DATA_HOME/mime`, the last is usually `/usr/share/mime`. Parsing is pure: the
/// layer is made from the bytes of the compiled files that `update-mime-database` writes,
/// so tests and callers can build one without touching the file system.
public struct MIMEDatabaseLayer: Sendable {
    /// One line of `globs2`.
    struct GlobRule: Sendable, Equatable {
        var weight: Int
        var type: String
        var pattern: String
        var caseSensitive: Bool
        /// `__NOGLOBS__`: drop this type's globs from lower-precedence layers.
        var deletesEarlierGlobs: Bool
    }

    /// One `[priority:type]` section of `magic`.
    struct MagicSection: Sendable, Equatable {
        var priority: Int
        var type: String
        var rules: [MagicRule]
        /// A `>0=__NOMAGIC__` line: drop this type's magic from lower-precedence layers.
        var deletesEarlierMagic: Bool
    }

    /// One rule line of a magic section, with any byte swapping for `~word-size` already done.
    struct MagicRule: Sendable, Equatable {
        var indent: Int
        var offset: Int
        var rangeLength: Int
        var value: [UInt8]
        var mask: [UInt8]?
    }

    /// A `child parent` line of `subclasses` or an `alias canonical` line of `aliases`.
    struct TypePair: Sendable, Equatable {
        var first: String
        var second: String
    }

    /// Where the layer came from, e.g. `/usr/share/mime`; used in ``MIMEDatabase/source``.
    public var directory: String
    var globs: [GlobRule]
    var magicSections: [MagicSection]
    var subclasses: [TypePair]
    var aliases: [TypePair]
    /// Lines that were skipped because they could not be understood, as `file:line: reason`.
    ///
    /// The spec asks readers to skip what they do not understand rather than fail; these are
    /// kept so a daemon can log them.
    public internal(set) var issues: [String]

    /// Parses the compiled files of one directory. Pass `nil` for a file that does not exist.
    ///
    /// - Throws: ``MIMEDatabaseError`` when `magic` is structurally broken or a text file is not UTF-8.
    public init(
        directory: String,
        globs2: [UInt8]? = nil,
        magic: [UInt8]? = nil,
        subclasses: [UInt8]? = nil,
        aliases: [UInt8]? = nil
    ) throws {
        self.directory = directory
        self.issues = []
        self.globs = []
        self.magicSections = []
        self.subclasses = []
        self.aliases = []
        if let globs2 {
            self.globs = try Self.parseGlobs2(globs2, path: directory + "/globs2", issues: &issues)
        }
        if let magic {
            self.magicSections = try Self.parseMagic(magic, path: directory + "/magic", issues: &issues)
        }
        if let subclasses {
            self.subclasses = try Self.parsePairs(subclasses, path: directory + "/subclasses", issues: &issues)
        }
        if let aliases {
            self.aliases = try Self.parsePairs(aliases, path: directory + "/aliases", issues: &issues)
        }
    }

    /// Builds a layer from already-parsed parts (the built-in fallback uses this).
    init(
        directory: String,
        globs: [GlobRule],
        magicSections: [MagicSection],
        subclasses: [TypePair],
        aliases: [TypePair]
    ) {
        self.directory = directory
        self.globs = globs
        self.magicSections = magicSections
        self.subclasses = subclasses
        self.aliases = aliases
        self.issues = []
    }
}
