import Foundation

extension MIMEDatabase {
    /// The freedesktop database found through the XDG directories, or the built-in fallback when
    /// none is installed or it cannot be read (``source`` says which was used).
    public static func loadSystemOrBuiltin(environment: [String: String] = ProcessInfo.processInfo.environment) -> MIMEDatabase {
        (try? load(environment: environment)) ?? .builtin
    }
}
