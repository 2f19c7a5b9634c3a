import DocRouteTypes
import Foundation

extension ManifestReader.Reader {
    /// One value read from the property list, with the key path it stood at.
    struct Located<Value> {
        var keyPath: String
        var value: Value
    }

    mutating func warn(_ code: ManifestWarning.Code, _ keyPath: String, _ message: String) {
        warnings.append(ManifestWarning(code: code, file: file, keyPath: keyPath, message: message))
    }

    /// `string` without surrounding white space; a warning when there was some.
    mutating func trimmed(_ string: String, at keyPath: String) -> String {
        let result = string.trimmingCharacters(in: .whitespacesAndNewlines)
        if result.utf8.count != string.utf8.count {
            warn(.whitespaceTrimmed, keyPath, "\(String(reflecting: string)) has white space around it; read as '\(result)'")
        }
        return result
    }

    /// An optional string key: trimmed; a warning and nil when it holds something else.
    mutating func string(_ dictionary: [String: Any], _ key: String, at path: String) -> String? {
        guard let value = dictionary[key] else { return nil }
        guard let string = value as? String else {
            warn(.wrongType, path + key, "expected a string, found \(PropertyListTypeName.of(value)); ignored")
            return nil
        }
        return trimmed(string, at: path + key)
    }

    /// A key Apple documents as an array of strings. A lone string is a one-element array (as Launch
    /// Services reads it), with a warning unless Apple documents the string form too
    /// (`stringIsDocumented`: a tag specification's values are "a string or an array of strings");
    /// elements are trimmed; anything else is left out with a warning. Nil when the key is absent.
    mutating func strings(_ dictionary: [String: Any], _ key: String, at path: String, stringIsDocumented: Bool = false) -> [Located<String>]? {
        guard let value = dictionary[key] else { return nil }
        let keyPath = path + key
        if let string = value as? String {
            if !stringIsDocumented {
                warn(.oneElementArray, keyPath, "a string where an array of strings belongs; read as the one-element array [\(String(reflecting: string))]")
            }
            return nonEmpty(trimmed(string, at: keyPath), at: keyPath).map { [Located(keyPath: keyPath, value: $0)] } ?? []
        }
        guard let array = value as? [Any] else {
            warn(.wrongType, keyPath, "expected an array of strings, found \(PropertyListTypeName.of(value)); ignored")
            return []
        }
        var result: [Located<String>] = []
        for (index, element) in array.enumerated() {
            let elementPath = "\(keyPath)[\(index)]"
            guard let string = element as? String else {
                warn(.wrongType, elementPath, "expected a string, found \(PropertyListTypeName.of(element)); left out")
                continue
            }
            if let usable = nonEmpty(trimmed(string, at: elementPath), at: elementPath) {
                result.append(Located(keyPath: elementPath, value: usable))
            }
        }
        return result
    }

    mutating func nonEmpty(_ string: String, at keyPath: String) -> String? {
        if string.isEmpty { warn(.invalidValue, keyPath, "an empty string; left out") }
        return string.isEmpty ? nil : string
    }

    /// A key Apple documents as an array of dictionaries. A lone dictionary is a one-element array;
    /// an element that is not a dictionary is left out with a warning.
    mutating func dictionaries(_ dictionary: [String: Any], _ key: String, at path: String = "") -> [Located<[String: Any]>] {
        guard let value = dictionary[key] else { return [] }
        let keyPath = path + key
        if let single = value as? [String: Any] {
            warn(.oneElementArray, keyPath, "a dictionary where an array of dictionaries belongs; read as a one-element array")
            return [Located(keyPath: keyPath, value: single)]
        }
        guard let array = value as? [Any] else {
            warn(.wrongType, keyPath, "expected an array of dictionaries, found \(PropertyListTypeName.of(value)); ignored")
            return []
        }
        var result: [Located<[String: Any]>] = []
        for (index, element) in array.enumerated() {
            guard let entry = element as? [String: Any] else {
                warn(.wrongType, "\(keyPath)[\(index)]", "expected a dictionary, found \(PropertyListTypeName.of(element)); this entry is skipped")
                continue
            }
            result.append(Located(keyPath: "\(keyPath)[\(index)]", value: entry))
        }
        return result
    }

    /// The Xcode build variables in `string`: `$(NAME)`, `$(NAME:modifier)`, `${NAME}`.
    ///
    /// Xcode expands them when it builds the app; in a manifest they mean the project's Info.plist
    /// template was installed instead of the built app's.
    static func buildVariables(in string: String) -> [String] {
        var result: [String] = []
        var rest = Substring(string)
        while let dollar = rest.firstIndex(of: "$") {
            let afterDollar = rest.index(after: dollar)
            guard afterDollar < rest.endIndex else { break }
            let opener = rest[afterDollar]
            let closer: Character? = opener == "(" ? ")" : opener == "{" ? "}" : nil
            guard let closer, let end = rest[afterDollar...].firstIndex(of: closer) else {
                rest = rest[afterDollar...]
                continue
            }
            let name = rest[rest.index(after: afterDollar)..<end]
            if let first = name.first, first.isLetter || first == "_" { result.append(String(rest[dollar...end])) }
            rest = rest[rest.index(after: end)...]
        }
        return result
    }

    /// Leaves out a value holding an unexpanded build variable, with a warning naming it.
    mutating func withoutBuildVariables(_ values: [Located<String>], what: String) -> [Located<String>] {
        values.filter { item in
            let variables = Self.buildVariables(in: item.value)
            guard !variables.isEmpty else { return true }
            warn(.buildVariable, item.keyPath,
                 "'\(item.value)' holds the Xcode build variable \(variables.joined(separator: ", ")), never expanded; this \(what) is left out (install the built app's Info.plist, or write the value in)")
            return false
        }
    }
}
