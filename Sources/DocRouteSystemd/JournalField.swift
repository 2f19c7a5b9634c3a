/// The name of a field in a journal entry, always valid for journald.
///
/// journald accepts field names of at most 64 characters from `A`–`Z`, `0`–`9` and `_`, not starting
/// with `_` (reserved for fields journald itself adds and trusts) or a digit. Anything else is dropped
/// by journald, so metadata keys are turned into such names by ``init(metadataKey:)``.
package struct JournalField: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The field name, e.g. `DOCROUTE_MAILBOX`.
    package let name: String

    /// The longest name journald accepts.
    package static let maximumNameLength = 64

    /// Prefix for docroute's own fields and for metadata keys that would clash with journald's.
    package static let docroutePrefix = "DOCROUTE_"

    private init(unchecked name: String) { self.name = name }

    /// A field with exactly this name, or `nil` when journald would reject it.
    package init?(validating name: String) {
        guard Self.isValid(name) else { return nil }
        self.name = name
    }

    // MARK: Fields journald interprets

    /// The human-readable message.
    package static let message = JournalField(unchecked: "MESSAGE")
    /// A 128-bit id naming the kind of event, for `journalctl MESSAGE_ID=…` and the catalog.
    package static let messageID = JournalField(unchecked: "MESSAGE_ID")
    /// Syslog priority, 0 (emerg) to 7 (debug).
    package static let priority = JournalField(unchecked: "PRIORITY")
    /// Source file of the log call.
    package static let codeFile = JournalField(unchecked: "CODE_FILE")
    /// Source line of the log call.
    package static let codeLine = JournalField(unchecked: "CODE_LINE")
    /// Function of the log call.
    package static let codeFunction = JournalField(unchecked: "CODE_FUNC")
    /// The program name `journalctl -t` filters by.
    package static let syslogIdentifier = JournalField(unchecked: "SYSLOG_IDENTIFIER")

    // MARK: docroute's fields

    /// The bundle identifier of the handler concerned (metadata `bundle-id` or `bundleIdentifier`).
    package static let docrouteBundleID = JournalField(unchecked: "DOCROUTE_BUNDLE_ID")
    /// The delivery concerned (metadata `delivery-id` or `deliveryID`).
    package static let docrouteDeliveryID = JournalField(unchecked: "DOCROUTE_DELIVERY_ID")
    /// The name a document came with, before it was made safe (metadata `original-name`).
    package static let docrouteOriginalName = JournalField(unchecked: "DOCROUTE_ORIGINAL_NAME")
    /// A mail attachment's message: its Message-ID, or `maildir:<unique name>` (metadata `mail-message-id`).
    package static let docrouteMailMessageID = JournalField(unchecked: "DOCROUTE_MAIL_MESSAGE_ID")
    /// A mail attachment's IMAP part number (metadata `mail-part`).
    package static let docrouteMailPart = JournalField(unchecked: "DOCROUTE_MAIL_PART")
    /// The mailbox a document arrived in (metadata `mailbox`).
    package static let docrouteMailbox = JournalField(unchecked: "DOCROUTE_MAILBOX")
    /// The file concerned (metadata `path`).
    package static let docroutePath = JournalField(unchecked: "DOCROUTE_PATH")
    /// The swift-log label of the logger.
    package static let docrouteLogger = JournalField(unchecked: "DOCROUTE_LOGGER")
    /// The swift-log source (module) of the log call.
    package static let docrouteSource = JournalField(unchecked: "DOCROUTE_SOURCE")
    /// The error attached to the log event, as text.
    package static let docrouteError = JournalField(unchecked: "DOCROUTE_ERROR")

    /// Sanitised metadata keys that mean one of docroute's own fields.
    static let docrouteAliases: [String: JournalField] = [
        "BUNDLE_ID": .docrouteBundleID,
        "BUNDLE_IDENTIFIER": .docrouteBundleID,
        "DELIVERY_ID": .docrouteDeliveryID,
        "ORIGINAL_NAME": .docrouteOriginalName,
        "MAIL_MESSAGE_ID": .docrouteMailMessageID,
        "MAIL_PART": .docrouteMailPart,
        "MAILBOX": .docrouteMailbox,
        "PATH": .docroutePath,
    ]

    /// Names journald or the handler itself gives a meaning; a metadata key must not set them.
    static let reservedNames: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "ERRNO", "INVOCATION_ID", "USER_INVOCATION_ID", "TID",
        "UNIT", "USER_UNIT", "DOCUMENTATION",
    ]
    static let reservedPrefixes = ["CODE_", "SYSLOG_", "OBJECT_", "COREDUMP_"]

    /// The field a swift-log metadata key is written as.
    ///
    /// The key is upper-cased, a camelCase hump becomes `_` (`deliveryID` → `DELIVERY_ID`), every
    /// other character outside `A`–`Z`/`0`–`9` becomes `_` (runs collapse into one), and leading
    /// underscores go. docroute's keys become its constants (`bundle-id` → ``docrouteBundleID``).
    /// A name that would clash with one journald interprets (`message` → `MESSAGE`), that starts
    /// with a digit, or that is empty is put under `DOCROUTE_` instead, so no metadata can forge a
    /// priority or message. Names are cut to 64 characters.
    package init(metadataKey: String) {
        let sanitised = Self.sanitise(metadataKey)
        if let alias = Self.docrouteAliases[sanitised] {
            self = alias
            return
        }
        let needsPrefix = sanitised.isEmpty
            || sanitised.first!.isASCIIDigit
            || Self.reservedNames.contains(sanitised)
            || Self.reservedPrefixes.contains(where: { sanitised.hasPrefix($0) })
        let name = needsPrefix ? Self.docroutePrefix + (sanitised.isEmpty ? "FIELD" : sanitised) : sanitised
        self.init(unchecked: String(name.prefix(Self.maximumNameLength)))
    }

    /// Whether journald accepts `name` as a field name sent by a client.
    package static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= maximumNameLength else { return false }
        guard first != UInt8(ascii: "_"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// Upper-cases, splits camelCase, maps the rest to `_`, collapses and trims underscores.
    static func sanitise(_ key: String) -> String {
        var result = ""
        var previous: Character? = nil
        for character in key {
            let isUpper = character.isASCII && character.isUppercase
            if isUpper, let previous, previous.isASCII, previous.isLowercase || previous.isNumber {
                result.append("_")
            }
            if character.isASCII, character.isLetter || character.isNumber {
                result.append(character.uppercased())
            } else if result.last != "_" {
                result.append("_")
            }
            previous = character
        }
        while result.first == "_" { result.removeFirst() }
        while result.last == "_" { result.removeLast() }
        return result
    }

    /// The field name.
    package var description: String { name }

    /// Orders by name.
    package static func < (lhs: JournalField, rhs: JournalField) -> Bool { lhs.name < rhs.name }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
