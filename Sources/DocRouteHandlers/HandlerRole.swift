/// `CFBundleTypeRole`: what a handler does with a document type.
public enum HandlerRole: String, Sendable, Hashable, CaseIterable, Codable {
    case editor = "Editor"
    case viewer = "Viewer"
    case shell = "Shell"
    /// Declares the type without opening it.
    case none = "None"

    /// Lower is preferred; `None` is never a candidate.
    var preference: Int {
        switch self {
        case .editor: 0
        case .viewer: 1
        case .shell: 2
        case .none: 3
        }
    }
}
