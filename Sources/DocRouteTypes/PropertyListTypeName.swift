import Foundation

/// Names a property-list value's type the way Apple's documentation does, for error messages.
public enum PropertyListTypeName {
    /// `string`, `array`, `dictionary`, `boolean`, `number`, `date`, `data` or the Swift type.
    public static func of(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        case is Bool: "a boolean"
        case is Int, is Double, is NSNumber: "a number"
        case is Date: "a date"
        case is Data: "data"
        default: "a \(type(of: value))"
        }
    }
}
