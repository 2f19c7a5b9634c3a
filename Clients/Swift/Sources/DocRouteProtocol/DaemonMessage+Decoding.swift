extension DaemonMessage {
    /// Decodes one line received from the daemon (without its trailing `\n`).
    ///
    /// Unknown fields are ignored. An `error` whose code this library does not know keeps that
    /// code (``ErrorCode/isKnown`` is false), so a newer daemon's codes reach the caller. Any failure is a
    /// `bad-request` ``ProtocolError`` naming the problem.
    public init(decoding line: some Collection<UInt8>) throws(ProtocolError) {
        let object = try MessageObject(line: line)
        let id = object.requestID
        switch object.type {
        case "welcome":
            var features: [String] = []
            switch object.members["features"] {
            case nil, .null?: break
            case .array(let names)?:
                // Names this library does not know are kept: the caller decides what they mean.
                features = names.compactMap(\.stringValue)
            case let other?: throw object.mistyped("features", expected: "an array of strings", found: other)
            }
            self = .welcome(
                protocol: try object.integer("protocol"), daemon: try object.string("daemon"), id: id,
                features: features, descriptorSocket: try object.optionalString("descriptorSocket"))
        case "subscribed":
            self = .subscribed(
                id: id, bundleIdentifier: try object.string("bundleIdentifier"), pending: try object.integer("pending"))
        case "launch":
            self = .launch(try Self.launchedDocument(object))
        case "openURL":
            self = .openURL(
                DocumentEvent(
                    deliveryID: try object.string("deliveryID"),
                    urlString: try object.string("url"),
                    isFileURL: try object.bool("isFileURL"),
                    contentType: try object.optionalString("contentType"),
                    mailbox: try object.optionalString("mailbox"),
                    sourceApplication: try object.optionalString("sourceApplication"),
                    annotation: try object.annotation(object.members["annotation"], field: "annotation")))
        case "opened":
            self = .opened(
                id: id,
                deliveryID: try object.string("deliveryID"),
                bundleIdentifier: try object.string("bundleIdentifier"),
                contentType: try object.optionalString("contentType"))
        case "candidates":
            let candidates = try object.array("candidates").enumerated().map { index, value throws(ProtocolError) in
                try Self.candidate(value, at: "candidates[\(index)]", in: object)
            }
            self = .candidates(id: id, contentType: try object.optionalString("contentType"), candidates: candidates)
        case "status":
            let handlers = try object.array("handlers").enumerated().map { index, value throws(ProtocolError) in
                try Self.handlerStatus(value, at: "handlers[\(index)]", in: object)
            }
            let inboxes = try object.array("inboxes").enumerated().map { index, value throws(ProtocolError) in
                try Self.inboxStatus(value, at: "inboxes[\(index)]", in: object)
            }
            let extra = object.members.filter { !Self.statusFieldNames.contains($0.key) }
            self = .status(id: id, handlers: handlers, inboxes: inboxes, extra: extra)
        case "released":
            self = .released(
                id: id, path: try object.string("path"), deliveryID: try object.optionalString("deliveryID"),
                bundleIdentifier: try object.optionalString("bundleIdentifier"), contentType: try object.optionalString("contentType"))
        case "history":
            let fleet = object.members["fleet"].flatMap { $0 == .null ? nil : $0 }
            self = .history(id: id, documents: try object.array("documents"), fleet: fleet)
        case "redelivered":
            self = .redelivered(id: id, results: try object.array("results"))
        case "error":
            let codeText = try object.string("code")
            let message = try object.string("message")
            self = .error(id: id, code: ErrorCode(rawValue: codeText), message: message)
        default:
            throw object.unknownType(expected: Self.types)
        }
    }

    private static func launchedDocument(_ object: MessageObject) throws(ProtocolError) -> DocumentEvent? {
        let options = try object.object("launchOptions")
        let deliveryID = try object.optionalString("deliveryID")
        let url: String
        switch options[LaunchOptionsKey.url] {
        case nil, .null?:
            if deliveryID != nil {
                throw object.invalid("a launch with a deliveryID needs launchOptions.\(LaunchOptionsKey.url)")
            }
            return nil
        case .string(let value)?:
            url = value
        case let other?:
            throw object.mistyped("launchOptions.\(LaunchOptionsKey.url)", expected: "a string", found: other)
        }
        guard let deliveryID else { throw object.missing("deliveryID") }
        var sourceApplication: String?
        switch options[LaunchOptionsKey.sourceApplication] {
        case nil, .null?: sourceApplication = nil
        case .string(let value)?: sourceApplication = value
        case let other?:
            throw object.mistyped(
                "launchOptions.\(LaunchOptionsKey.sourceApplication)", expected: "a string", found: other)
        }
        return DocumentEvent(
            deliveryID: deliveryID,
            urlString: url,
            isFileURL: try object.bool("isFileURL"),
            contentType: try object.optionalString("contentType"),
            mailbox: try object.optionalString("mailbox"),
            sourceApplication: sourceApplication,
            annotation: try object.annotation(
                options[LaunchOptionsKey.annotation], field: "launchOptions.\(LaunchOptionsKey.annotation)"))
    }

    private static func entry(_ value: JSONValue, at path: String, in object: MessageObject) throws(ProtocolError)
        -> [String: JSONValue]
    {
        guard case .object(let members) = value else { throw object.mistyped(path, expected: "an object", found: value) }
        return members
    }

    private static func field<T>(
        _ members: [String: JSONValue], _ name: String, at path: String, in object: MessageObject,
        expected: String, _ extract: (JSONValue) -> T?
    ) throws(ProtocolError) -> T {
        guard let value = members[name], value != .null else { throw object.missing("\(path).\(name)") }
        guard let result = extract(value) else {
            throw object.mistyped("\(path).\(name)", expected: expected, found: value)
        }
        return result
    }

    private static func candidate(_ value: JSONValue, at path: String, in object: MessageObject)
        throws(ProtocolError) -> OpenCandidate
    {
        let members = try entry(value, at: path, in: object)
        func text(_ name: String) throws(ProtocolError) -> String {
            try field(members, name, at: path, in: object, expected: "a string") { $0.stringValue }
        }
        var isDefault = false
        switch members["default"] {
        case nil, .null?: break
        case .bool(let flag)?: isDefault = flag
        case let other?: throw object.mistyped("\(path).default", expected: "a boolean", found: other)
        }
        let bundleIdentifier = try text("bundleIdentifier")
        // `name` is for display; a daemon that leaves it out still gives a usable list.
        let name = members["name"]?.stringValue ?? bundleIdentifier
        return OpenCandidate(
            bundleIdentifier: bundleIdentifier,
            name: name,
            matchedType: try text("matchedType"), rank: try text("rank"), role: try text("role"),
            isDefault: isDefault)
    }

    private static func handlerStatus(_ value: JSONValue, at path: String, in object: MessageObject)
        throws(ProtocolError) -> HandlerStatus
    {
        let members = try entry(value, at: path, in: object)
        return HandlerStatus(
            bundleIdentifier: try field(members, "bundleIdentifier", at: path, in: object, expected: "a string") {
                $0.stringValue
            },
            subscribed: try field(members, "subscribed", at: path, in: object, expected: "a boolean") {
                if case .bool(let bool) = $0 { bool } else { nil }
            },
            pending: try field(members, "pending", at: path, in: object, expected: "an integer") {
                if case .integer(let integer) = $0 { Int(exactly: integer) } else { nil }
            },
            extra: members.filter { !HandlerStatus.fieldNames.contains($0.key) })
    }

    private static func inboxStatus(_ value: JSONValue, at path: String, in object: MessageObject)
        throws(ProtocolError) -> InboxStatus
    {
        let members = try entry(value, at: path, in: object)
        return InboxStatus(
            path: try field(members, "path", at: path, in: object, expected: "a string") { $0.stringValue },
            mailboxes: try field(members, "mailboxes", at: path, in: object, expected: "an array of strings") {
                guard case .array(let elements) = $0 else { return nil }
                let strings = elements.compactMap(\.stringValue)
                return strings.count == elements.count ? strings : nil
            },
            extra: members.filter { !InboxStatus.fieldNames.contains($0.key) })
    }
}
