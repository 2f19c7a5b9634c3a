import Foundation

/// One parsed protocol line: a JSON object with its `type` and, if readable, its `id`.
///
/// Field accessors throw `bad-request` errors that name the message type and the field,
/// and carry the request id so the daemon can echo it.
struct MessageObject {
    let members: [String: JSONValue]
    let type: String
    let requestID: String?

    /// Parses one line (without its `\n`).
    init(line: some Collection<UInt8>) throws(ProtocolError) {
        guard String(validating: line, as: UTF8.self) != nil else {
            throw .badRequest("the line is not valid UTF-8; messages are UTF-8 JSON")
        }
        guard line.contains(where: { !Self.isJSONWhitespace($0) }) else {
            throw .badRequest("the line is empty; send one JSON object per line")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw .badRequest("the line is not valid JSON; send one JSON object per line", cause: error)
        }
        guard case .object(let members) = value else {
            throw .badRequest("the line is a JSON \(value.kindName), not an object; every message is a JSON object")
        }
        var requestID: String?
        switch members["id"] {
        case nil, .null?:
            requestID = nil
        case .string(let id)?:
            requestID = id
        case let other?:
            throw .badRequest("field 'id' must be a string, found \(other.kindName)")
        }
        switch members["type"] {
        case nil:
            throw .badRequest("the message has no 'type' field", requestID: requestID)
        case .string(let type)?:
            self.type = type
        case let other?:
            throw .badRequest("field 'type' must be a string, found \(other.kindName)", requestID: requestID)
        }
        self.members = members
        self.requestID = requestID
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    func unknownType(expected: [String]) -> ProtocolError {
        .badRequest(
            "unknown message type '\(type)'; expected one of \(expected.joined(separator: ", "))",
            requestID: requestID)
    }

    func missing(_ field: String) -> ProtocolError {
        .badRequest("'\(type)' is missing field '\(field)'", requestID: requestID)
    }

    func mistyped(_ field: String, expected: String, found: JSONValue) -> ProtocolError {
        .badRequest(
            "field '\(field)' of '\(type)' must be \(expected), found \(found.kindName)", requestID: requestID)
    }

    func invalid(_ message: String) -> ProtocolError {
        .badRequest("'\(type)': \(message)", requestID: requestID)
    }

    /// A required field; `null` counts as missing.
    private func required(_ field: String) throws(ProtocolError) -> JSONValue {
        guard let value = members[field], value != .null else { throw missing(field) }
        return value
    }

    func string(_ field: String) throws(ProtocolError) -> String {
        let value = try required(field)
        guard case .string(let string) = value else { throw mistyped(field, expected: "a string", found: value) }
        return string
    }

    /// An optional field; absent and `null` both read as `nil`.
    func optionalString(_ field: String) throws(ProtocolError) -> String? {
        guard let value = members[field], value != .null else { return nil }
        guard case .string(let string) = value else { throw mistyped(field, expected: "a string", found: value) }
        return string
    }

    /// An optional boolean; absent and `null` both read as `nil`.
    func optionalBool(_ field: String) throws(ProtocolError) -> Bool? {
        guard let value = members[field], value != .null else { return nil }
        guard case .bool(let bool) = value else { throw mistyped(field, expected: "a boolean", found: value) }
        return bool
    }

    func bool(_ field: String) throws(ProtocolError) -> Bool {
        let value = try required(field)
        guard case .bool(let bool) = value else { throw mistyped(field, expected: "a boolean", found: value) }
        return bool
    }

    func integer(_ field: String) throws(ProtocolError) -> Int {
        let value = try required(field)
        guard case .integer(let integer) = value, let result = Int(exactly: integer) else {
            throw mistyped(field, expected: "an integer", found: value)
        }
        return result
    }

    func object(_ field: String) throws(ProtocolError) -> [String: JSONValue] {
        let value = try required(field)
        guard case .object(let object) = value else { throw mistyped(field, expected: "an object", found: value) }
        return object
    }

    func array(_ field: String) throws(ProtocolError) -> [JSONValue] {
        let value = try required(field)
        guard case .array(let array) = value else { throw mistyped(field, expected: "an array", found: value) }
        return array
    }

    /// A property-list dictionary such as an annotation; absent reads as empty.
    func annotation(_ value: JSONValue?, field: String) throws(ProtocolError) -> [String: PropertyListValue] {
        guard let value, value != .null else { return [:] }
        guard case .object = value else { throw mistyped(field, expected: "an object", found: value) }
        guard case .dictionary(let dictionary)? = PropertyListValue(value) else {
            throw invalid("field '\(field)' must be property-list compatible and cannot contain null")
        }
        return dictionary
    }
}
