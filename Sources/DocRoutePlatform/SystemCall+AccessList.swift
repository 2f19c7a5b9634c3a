import CDocRouteShim
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SystemCall {
    /// Sets the POSIX access ACL of an open file or folder (`system.posix_acl_access`, the
    /// kernel's binary form that libacl's `acl_set_fd` writes): the owner gets `ownerPermissions`,
    /// user `userID` gets `userPermissions`, the owning group and others nothing. The mask equals
    /// `userPermissions`, so `ls -l` shows them as the group bits, with a `+`.
    ///
    /// Only the owner or a process with CAP_FOWNER may do this.
    /// - Throws: ``DeliveryError`` (`permission-denied` with what to do when the file system does
    ///   not store ACLs).
    package static func setAccessList(
        _ descriptor: FileDescriptor,
        ownerPermissions: UInt16,
        userID: UInt32,
        userPermissions: UInt16,
        describing: @autoclosure () -> String
    ) throws {
        let bytes = accessListBytes(ownerPermissions: ownerPermissions, userID: userID, userPermissions: userPermissions)
        let result = retryingOnInterrupt {
            bytes.withUnsafeBytes { docroute_set_access_acl(descriptor.rawValue, $0.baseAddress, $0.count) }
        }
        switch result {
        case .success: return
        case .failure(let errno) where errno == .notSupported:
            let path = describing()
            throw DeliveryError(
                code: .permissionDenied,
                message: "The file system holding \(path) does not store POSIX ACLs, which docrouted (not running as root) needs to reach a handler's 0700 folder without opening it to a group: mount it with the acl option (ext4, XFS, Btrfs and tmpfs have them by default) or run docrouted as root.",
                cause: errno)
        case .failure(let errno):
            throw DeliveryError(errno: errno, operation: "set the access list of", path: describing())
        }
    }

    /// `acl_ea_header` (version 2) and `acl_ea_entry`s, little-endian, in the order the kernel
    /// requires: owner, named users, owning group, mask, others.
    static func accessListBytes(ownerPermissions: UInt16, userID: UInt32, userPermissions: UInt16) -> [UInt8] {
        let undefined = UInt32.max
        let entries: [(tag: UInt16, permissions: UInt16, id: UInt32)] = [
            (0x01, ownerPermissions, undefined),  // ACL_USER_OBJ
            (0x02, userPermissions, userID),      // ACL_USER
            (0x04, 0, undefined),                 // ACL_GROUP_OBJ
            (0x10, userPermissions, undefined),   // ACL_MASK
            (0x20, 0, undefined),                 // ACL_OTHER
        ]
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt32(2))
        for entry in entries {
            append(entry.tag)
            append(entry.permissions)
            append(entry.id)
        }
        return bytes
    }
}
