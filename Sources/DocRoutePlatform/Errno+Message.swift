import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Errno {
    /// The C library's text for the error (`strerror(3)`), such as "No such file or directory".
    package var systemMessage: String {
        strerror(rawValue).map { String(cString: $0) } ?? "unknown error"
    }
}
