/// The freedesktop.org shared-mime-info database: file name globs, content magic, aliases
/// and the subclass graph, merged from one or more directories and immutable afterwards.
///
/// Build one with ``MIMEDatabaseLoader`` (which reads `$XDG_DATA_HOME/mime` and every
/// `$XDG_DATA_DIRS` entry's `mime/`), from in-memory ``MIMEDatabaseLayer``s, or use
/// ``builtin`` when no database is installed. All lookups are pure and thread-safe.
///
/// Every MIME type this type returns is canonical: lowercase, without parameters, with
/// aliases resolved (`text/xml` becomes `application/xml`).
public final class MIMEDatabase: Sendable {
    /// Which data this database holds, e.g. `shared-mime-info: /usr/share/mime` or `built-in fallback`.
    public let source: String
    /// The directories the layers came from, highest precedence first.
    public let directories: [String]
    /// Lines skipped while parsing, as `file:line: reason` (see ``MIMEDatabaseLayer/issues``).
    public let issues: [String]

    let globs: MIMEGlobTable
    let magic: MIMEMagicTable
    /// Explicit `sub-class-of` parents, canonical on both sides, in precedence then file order.
    let explicitParents: [String: [String]]
    /// Lowercase alias to lowercase canonical type.
    let aliasTargets: [String: String]
    /// Canonical type to the aliases that name it, for finding a UTI declared under an alias.
    let aliasesByTarget: [String: [String]]

    /// Merges layers given highest precedence first (user directory before system ones).
    ///
    /// Where layers disagree the higher-precedence one wins: its aliases replace others, its
    /// `__NOGLOBS__` and `__NOMAGIC__` markers discard that type's globs or magic from the
    /// layers after it, and among equal glob or magic rules its rules are tried first.
    ///
    /// - Parameter source: What to report in ``source``; by default `shared-mime-info: ` and the
    ///   layers' directories, comma-separated.
    public convenience init(layers: [MIMEDatabaseLayer], source: String? = nil) {
        self.init(
            layers: layers,
            source: source ?? "shared-mime-info: " + layers.map(\.directory).joined(separator: ", "),
            directories: layers.map(\.directory)
        )
    }

    /// The built-in fallback table, for machines without shared-mime-info.
    /// ``source`` is `built-in fallback` and ``directories`` is empty.
    public static let builtin = MIMEDatabase(
        layers: [MIMEBuiltinDatabase.makeLayer()],
        source: MIMEBuiltinDatabase.source,
        directories: []
    )

    /// Assembles a database from finished parts (see ``adding(globs:subclasses:)``).
    init(source: String, directories: [String], issues: [String], globs: MIMEGlobTable, magic: MIMEMagicTable,
         explicitParents: [String: [String]], aliasTargets: [String: String], aliasesByTarget: [String: [String]]) {
        self.source = source
        self.directories = directories
        self.issues = issues
        self.globs = globs
        self.magic = magic
        self.explicitParents = explicitParents
        self.aliasTargets = aliasTargets
        self.aliasesByTarget = aliasesByTarget
    }

    private init(layers: [MIMEDatabaseLayer], source: String, directories: [String]) {
        self.directories = directories
        self.source = source
        self.issues = layers.flatMap(\.issues)

        var aliasTargets: [String: String] = [:]
        for layer in layers.reversed() {
            for pair in layer.aliases {
                aliasTargets[Self.normalized(pair.first)] = Self.normalized(pair.second)
            }
        }
        func canonical(_ type: String) -> String {
            let type = Self.normalized(type)
            return aliasTargets[type] ?? type
        }

        var globEntries: [MIMEGlobTable.Entry] = []
        var magicSections: [(section: MIMEDatabaseLayer.MagicSection, layer: Int, order: Int)] = []
        for (layerIndex, layer) in layers.enumerated().reversed() {
            for rule in layer.globs {
                let type = canonical(rule.type)
                if rule.deletesEarlierGlobs {
                    globEntries.removeAll { $0.type == type && $0.layer > layerIndex }
                    continue
                }
                globEntries.append(
                    MIMEGlobTable.Entry(
                        type: type,
                        weight: rule.weight,
                        pattern: rule.pattern,
                        caseSensitive: rule.caseSensitive,
                        layer: layerIndex,
                        order: globEntries.count
                    )
                )
            }
            for var section in layer.magicSections {
                section.type = canonical(section.type)
                if section.deletesEarlierMagic {
                    magicSections.removeAll { $0.section.type == section.type && $0.layer > layerIndex }
                }
                if !section.rules.isEmpty {
                    magicSections.append((section, layerIndex, magicSections.count))
                }
            }
        }
        magicSections.sort { a, b in
            if a.section.priority != b.section.priority { return a.section.priority > b.section.priority }
            if a.layer != b.layer { return a.layer < b.layer }
            return a.order < b.order
        }

        var explicitParents: [String: [String]] = [:]
        for layer in layers {
            for pair in layer.subclasses {
                let child = canonical(pair.first)
                let parent = canonical(pair.second)
                guard child != parent else { continue }
                if explicitParents[child]?.contains(parent) != true {
                    explicitParents[child, default: []].append(parent)
                }
            }
        }

        self.aliasTargets = aliasTargets
        var aliasesByTarget: [String: [String]] = [:]
        for (alias, target) in aliasTargets.sorted(by: { $0.key < $1.key }) {
            aliasesByTarget[target, default: []].append(alias)
        }
        self.aliasesByTarget = aliasesByTarget
        self.explicitParents = explicitParents
        self.globs = MIMEGlobTable(entries: globEntries)
        self.magic = MIMEMagicTable(sections: magicSections.map(\.section))
    }

    /// How many leading bytes of a file the magic rules can look at; reading more is useless
    /// for detection. Rules past a shorter head simply do not match.
    public var maximumHeadLength: Int { magic.maximumExtent }

    /// Lowercase, parameters (`; charset=...`) and surrounding whitespace removed.
    static func normalized(_ type: String) -> String {
        let alreadyNormal = type.utf8.allSatisfy { byte in
            byte != UInt8(ascii: ";") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t")
                && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        if alreadyNormal { return type }
        var bytes = type.utf8.prefix { $0 != UInt8(ascii: ";") }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = bytes.first, isBlank(first) { bytes.removeFirst() }
        while let last = bytes.last, isBlank(last) { bytes.removeLast() }
        return String(decoding: bytes.map(MIMEGlobTable.asciiLowercased), as: UTF8.self)
    }
}
