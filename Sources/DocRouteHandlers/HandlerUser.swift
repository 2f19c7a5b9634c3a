/// `DocRouteUser`: who may subscribe as a handler and owns its sandbox copies.
public enum HandlerUser: Sendable, Hashable, Codable, CustomStringConvertible {
    case name(String)
    case uid(UInt32)

    /// Root only, the default when a manifest names no user.
    public static let root = HandlerUser.uid(0)

    public var description: String {
        switch self {
        case .name(let name): name
        case .uid(let uid): String(uid)
        }
    }
}
