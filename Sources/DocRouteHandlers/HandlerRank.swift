/// `LSHandlerRank`: how strongly a handler claims a document type.
public enum HandlerRank: String, Sendable, Hashable, CaseIterable, Codable {
    /// The app that creates this type.
    case owner = "Owner"
    /// The rank when none is given.
    case `default` = "Default"
    /// A secondary viewer or editor.
    case alternate = "Alternate"
    /// Never chosen to open the type.
    case none = "None"

    /// Lower is stronger; `None` is never a candidate.
    var strength: Int {
        switch self {
        case .owner: 0
        case .default: 1
        case .alternate: 2
        case .none: 3
        }
    }
}
