import DocRouteConfiguration
import DocRoutePlatform
import Foundation

/// The database password from `password_file`, read once at start. Its text is never logged,
/// printed or kept in an error.
package enum FleetPassword {
    /// The file `password_file` names: itself when absolute; otherwise a credential's name in
    /// `$CREDENTIALS_DIRECTORY`, where systemd puts what `LoadCredential=` names.
    package static func path(of name: String, environment: [String: String]) throws(FleetError) -> String {
        if name.hasPrefix("/") { return name }
        guard let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty else {
            throw FleetError(code: .passwordFile, message: """
                password_file '\(name)' is a credential's name, and CREDENTIALS_DIRECTORY is not set: start docrouted \
                from its unit with LoadCredential=\(name):/path/to/the/file, or give password_file as an absolute path
                """)
        }
        return folder + "/" + name
    }

    /// The password, its last line ending removed; nil when `configuration` names no file.
    package static func read(_ configuration: FleetConfiguration, environment: [String: String]) throws(FleetError) -> String? {
        guard let name = configuration.passwordFile else { return nil }
        let file = try path(of: name, environment: environment)
        guard let data = FileManager.default.contents(atPath: file) else {
            let exists = FileManager.default.fileExists(atPath: file)
            throw FleetError(code: .passwordFile, message: exists
                ? "password_file \(file) cannot be read by uid \(ProcessIdentity.realUserID); make it readable by docrouted's user only (chmod 0400), or pass it with LoadCredential="
                : "password_file \(file) does not exist; create it with the role's password, or fix password_file")
        }
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else {
            throw FleetError(code: .passwordFile, message: "password_file \(file) is empty; write the role's password in it")
        }
        return text
    }
}
