extension DaemonMessage {
    /// Top-level names of a `status` reply that ``status(id:handlers:inboxes:extra:)``'s
    /// `extra` cannot override.
    static let statusFieldNames: Set<String> = ["type", "id", "handlers", "inboxes"]

    /// The message as exactly one line of JSON terminated by `\n`, fields in PROTOCOL.md's order.
    public func encodedLine() -> [UInt8] {
        var writer = JSONLineWriter()
        writer.beginObject()
        writer.field("type", type)
        switch self {
        case .welcome(let version, let daemon, let id, let features, let descriptorSocket):
            writer.field("id", ifPresent: id)
            writer.field("protocol", version)
            writer.field("daemon", daemon)
            // A daemon without optional requests sends the welcome as protocol 1 first had it.
            if !features.isEmpty {
                writer.key("features")
                writer.beginArray()
                for feature in features { writer.string(feature) }
                writer.endArray()
            }
            writer.field("descriptorSocket", ifPresent: descriptorSocket)
        case .subscribed(let id, let bundleIdentifier, let pending):
            writer.field("id", ifPresent: id)
            writer.field("bundleIdentifier", bundleIdentifier)
            writer.field("pending", pending)
        case .launch(nil):
            writer.key("launchOptions")
            writer.beginObject()
            writer.endObject()
        case .launch(let event?):
            writer.field("deliveryID", event.deliveryID)
            writer.key("launchOptions")
            writer.beginObject()
            writer.field(LaunchOptionsKey.url, event.urlString)
            writer.field(LaunchOptionsKey.sourceApplication, ifPresent: event.sourceApplication)
            writer.key(LaunchOptionsKey.annotation)
            writer.dictionary(event.annotation)
            writer.endObject()
            writer.field("isFileURL", event.isFileURL)
            writer.field("contentType", ifPresent: event.contentType)
            writer.field("mailbox", ifPresent: event.mailbox)
        case .openURL(let event):
            writer.field("deliveryID", event.deliveryID)
            writer.field("url", event.urlString)
            writer.field("sourceApplication", ifPresent: event.sourceApplication)
            writer.key("annotation")
            writer.dictionary(event.annotation)
            writer.field("isFileURL", event.isFileURL)
            writer.field("contentType", ifPresent: event.contentType)
            writer.field("mailbox", ifPresent: event.mailbox)
        case .opened(let id, let deliveryID, let bundleIdentifier, let contentType):
            writer.field("id", ifPresent: id)
            writer.field("deliveryID", deliveryID)
            writer.field("bundleIdentifier", bundleIdentifier)
            writer.field("contentType", ifPresent: contentType)
        case .released(let id, let path, let deliveryID, let bundleIdentifier, let contentType):
            writer.field("id", ifPresent: id)
            writer.field("path", path)
            writer.field("deliveryID", ifPresent: deliveryID)
            writer.field("bundleIdentifier", ifPresent: bundleIdentifier)
            writer.field("contentType", ifPresent: contentType)
        case .history(let id, let documents, let fleet):
            writer.field("id", ifPresent: id)
            writer.key("documents")
            writer.value(JSONValue.array(documents))
            if let fleet {
                writer.key("fleet")
                writer.value(fleet)
            }
        case .redelivered(let id, let results):
            writer.field("id", ifPresent: id)
            writer.key("results")
            writer.value(JSONValue.array(results))
        case .candidates(let id, let contentType, let candidates):
            writer.field("id", ifPresent: id)
            writer.field("contentType", ifPresent: contentType)
            writer.key("candidates")
            writer.beginArray()
            for candidate in candidates {
                writer.beginObject()
                writer.field("bundleIdentifier", candidate.bundleIdentifier)
                writer.field("name", candidate.name)
                writer.field("matchedType", candidate.matchedType)
                writer.field("rank", candidate.rank)
                writer.field("role", candidate.role)
                writer.field("default", candidate.isDefault)
                writer.endObject()
            }
            writer.endArray()
        case .status(let id, let handlers, let inboxes, let extra):
            writer.field("id", ifPresent: id)
            writer.key("handlers")
            writer.beginArray()
            for handler in handlers {
                writer.beginObject()
                writer.field("bundleIdentifier", handler.bundleIdentifier)
                writer.field("subscribed", handler.subscribed)
                writer.field("pending", handler.pending)
                writer.extraFields(handler.extra, excluding: HandlerStatus.fieldNames)
                writer.endObject()
            }
            writer.endArray()
            writer.key("inboxes")
            writer.beginArray()
            for inbox in inboxes {
                writer.beginObject()
                writer.field("path", inbox.path)
                writer.key("mailboxes")
                writer.beginArray()
                for mailbox in inbox.mailboxes { writer.string(mailbox) }
                writer.endArray()
                writer.extraFields(inbox.extra, excluding: InboxStatus.fieldNames)
                writer.endObject()
            }
            writer.endArray()
            writer.extraFields(extra, excluding: Self.statusFieldNames)
        case .error(let id, let code, let message):
            writer.field("id", ifPresent: id)
            writer.field("code", code.rawValue)
            writer.field("message", message)
        }
        writer.endObject()
        return writer.line()
    }
}

extension JSONLineWriter {
    /// Writes open-ended fields in key order, skipping names the message defines itself.
    mutating func extraFields(_ extra: [String: JSONValue], excluding reserved: Set<String>) {
        for key in extra.keys.sorted() where !reserved.contains(key) {
            self.key(key)
            value(extra[key]!)
        }
    }
}
