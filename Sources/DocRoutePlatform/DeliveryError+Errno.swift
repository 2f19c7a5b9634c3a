import SystemPackage

extension DeliveryError {
    /// Runs system calls of the platform layer (the `FileDescriptor` extensions) and turns the
    /// `Errno` they throw into a ``DeliveryError`` naming `operation` and `path`, by the one mapping
    /// of ``init(errno:operation:path:file:line:)``; the location is the caller's. Any other error
    /// passes unchanged.
    @inline(__always)
    @discardableResult
    package static func performing<Value>(
        _ operation: String,
        _ path: @autoclosure () -> String?,
        file: String = #fileID,
        line: Int = #line,
        _ body: () throws -> Value
    ) throws -> Value {
        do {
            return try body()
        } catch let errno as Errno {
            throw DeliveryError(errno: errno, operation: operation, path: path(), file: file, line: line)
        }
    }

    /// Sets a POSIX access ACL (``FileDescriptor/setAccessList(ownerPermissions:userID:userPermissions:)``),
    /// saying what to do when the file system does not store ACLs.
    package static func settingAccessList(
        _ path: @autoclosure () -> String,
        file: String = #fileID,
        line: Int = #line,
        _ body: () throws -> Void
    ) throws {
        do {
            try body()
        } catch Errno.notSupported {
            let path = path()
            throw DeliveryError(
                code: .permissionDenied,
                message: "The file system holding \(path) does not store POSIX ACLs, which docrouted (not running as root) needs to reach a handler's 0700 folder without opening it to a group: mount it with the acl option (ext4, XFS, Btrfs and tmpfs have them by default) or run docrouted as root.",
                cause: Errno.notSupported, file: file, line: line)
        } catch let errno as Errno {
            throw DeliveryError(errno: errno, operation: "set the access list of", path: path(), file: file, line: line)
        }
    }
}
