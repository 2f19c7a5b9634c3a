import CDocRouteShim
import SystemPackage

extension FileDescriptor {
    /// Sets the POSIX access ACL of this open file or folder (`system.posix_acl_access`, the
    /// kernel's binary form that libacl's `acl_set_fd` writes): the owner gets `ownerPermissions`,
    /// user `userID` gets `userPermissions`, the owning group and others nothing. The mask equals
    /// `userPermissions`, so `ls -l` shows them as the group bits, with a `+`.
    ///
    /// Only the owner or a process with CAP_FOWNER may do this. A file system that does not store
    /// ACLs throws `ENOTSUP`.
    package func setAccessList(ownerPermissions: UInt16, userID: UInt32, userPermissions: UInt16) throws(Errno) {
        let bytes = Self.accessListBytes(ownerPermissions: ownerPermissions, userID: userID, userPermissions: userPermissions)
        _ = try bytes.withUnsafeBytes { value in
            Errno.result { docroute_set_access_acl(self.rawValue, value.baseAddress, value.count) }
        }.get()
    }

    /// `acl_ea_header` (version 2) and `acl_ea_entry`s, little-endian, in the order the kernel
    /// requires: owner, named users, owning group, mask, others.
    package static func accessListBytes(ownerPermissions: UInt16, userID: UInt32, userPermissions: UInt16) -> [UInt8] {
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
