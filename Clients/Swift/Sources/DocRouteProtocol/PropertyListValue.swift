/// A value that can be written both as JSON and as a property list: the type of an
/// `annotation` (PROTOCOL.md: "a JSON object that could be written as a property list (no nulls)").
///
/// Encoded through `Codable` it becomes the matching JSON value; decoding rejects `null`.
/// A whole-numbered JSON number such as `1.0` decodes as ``integer(_:)``, because JSON does not
/// keep the difference.
public enum PropertyListValue: Sendable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`.
    case integer(Int64)
    /// `<real>`.
    case real(Double)
    /// `<true/>` or `<false/>`.
    case bool(Bool)
    /// `<array>`.
    case array([PropertyListValue])
    /// `<dict>`.
    case dictionary([String: PropertyListValue])

    /// The JSON form of the value.
    public var jsonValue: JSONValue {
        switch self {
        case .string(let value): .string(value)
        case .integer(let value): .integer(value)
        case .real(let value): .real(value)
        case .bool(let value): .bool(value)
        case .array(let values): .array(values.map(\.jsonValue))
        case .dictionary(let members): .object(members.mapValues(\.jsonValue))
        }
    }

    /// Converts JSON to a property-list value, or returns `nil` when the JSON holds a `null`
    /// anywhere (a property list has no null).
    public init?(_ json: JSONValue) {
        switch json {
        case .null: return nil
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .real(let value): self = .real(value)
        case .string(let value): self = .string(value)
        case .array(let values):
            var converted: [PropertyListValue] = []
            converted.reserveCapacity(values.count)
            for value in values {
                guard let element = PropertyListValue(value) else { return nil }
                converted.append(element)
            }
            self = .array(converted)
        case .object(let members):
            var converted: [String: PropertyListValue] = [:]
            converted.reserveCapacity(members.count)
            for (key, value) in members {
                guard let element = PropertyListValue(value) else { return nil }
                converted[key] = element
            }
            self = .dictionary(converted)
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The integer, if this is one.
    public var integerValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }
}

extension PropertyListValue: Codable {
    /// Decodes a JSON value that has no `null` in it.
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        guard let value = PropertyListValue(json) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a property-list value cannot contain null"))
        }
        self = value
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}

extension PropertyListValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A real number.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: PropertyListValue...) { self = .array(elements) }
    /// A dictionary; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
