#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What ``SystemPackage/FilePath/checkAccess(_:)`` asks of a path (`access(2)`'s mode): the empty
/// set asks only whether it exists.
package struct FileAccess: OptionSet, Sendable, Hashable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// `R_OK`.
    package static let read = FileAccess(rawValue: R_OK)
    /// `W_OK`.
    package static let write = FileAccess(rawValue: W_OK)
    /// `X_OK`: run a file, or search (enter) a folder.
    package static let execute = FileAccess(rawValue: X_OK)
    /// `F_OK`: only that the path names something.
    package static let exists: FileAccess = []
}
