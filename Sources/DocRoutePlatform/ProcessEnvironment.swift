#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process's environment as it is now (`getenv(3)`): a variable that a library removed
/// meanwhile (`sd_listen_fds` removes `LISTEN_*`) is gone here too.
package enum ProcessEnvironment {
    /// The value of `name`; nil when it is not set (an empty value is "").
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
