#if canImport(Glibc)
import Glibc
#endif

/// User and group lookups that are safe from any thread.
///
/// `getpwnam`, `getpwuid` and `getgrnam` return pointers into one static buffer per process, so
/// two concurrent requests (the daemon answers many connections at once) overwrite each other's
/// answer mid-read (a flood of `status` requests crashed in `strlen` that way). Everything here uses the
/// reentrant `_r` forms with a buffer of its own, grown on `ERANGE`, and copies the answer out.
package enum UserDatabase {
    /// A user's passwd entry, as far as docrouted needs it.
    package struct User: Sendable, Hashable {
        package var name: String
        package var uid: UInt32
        package var gid: UInt32
    }

    /// A group's entry: its id and the names of its listed (supplementary) members.
    package struct Group: Sendable, Hashable {
        package var name: String
        package var gid: UInt32
        package var members: [String]
    }

    /// The user named `name`, or nil when there is none (or the lookup failed).
    package static func user(named name: String) -> User? {
        lookUp({ entry, buffer, size, result in getpwnam_r(name, entry, buffer, size, result) }, copy: User.init)
    }

    /// The user with `uid`, or nil when there is none.
    package static func user(id uid: UInt32) -> User? {
        lookUp({ entry, buffer, size, result in getpwuid_r(uid, entry, buffer, size, result) }, copy: User.init)
    }

    /// The group named `name`, or nil when there is none.
    package static func group(named name: String) -> Group? {
        lookUp({ entry, buffer, size, result in getgrnam_r(name, entry, buffer, size, result) }, copy: Group.init)
    }

    /// Every group `user` is in: `gid` (its primary group) first, then those of the group
    /// database, as `initgroups` would set them at login (`getgrouplist`, which is reentrant).
    package static func groups(of user: String, primary gid: UInt32) -> [UInt32] {
        var count: Int32 = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let found = getgrouplist(user, gid, &groups, &count)
            if found >= 0 {
                var result: [UInt32] = [gid]
                for group in groups.prefix(Int(count)) where !result.contains(group) { result.append(group) }
                return result
            }
            // -1: too small, and `count` now says how many there are.
            if count <= groups.count { count = Int32(groups.count * 2) }
            if count > 65_536 { return [gid] }
        }
    }

    /// Calls a `get…_r` function with a buffer that grows until the entry fits (`ERANGE`), and
    /// copies the entry out (`copy`) while the buffer it points into is still alive.
    private static func lookUp<Entry, Value>(
        _ call: (UnsafeMutablePointer<Entry>, UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>) -> Int32,
        copy: (Entry) -> Value
    ) -> Value? {
        var size = 1024
        while size <= 1 << 20 {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let entry = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
            defer { entry.deallocate() }
            var result: UnsafeMutablePointer<Entry>?
            var code: Int32
            repeat { code = call(entry, buffer, size, &result) } while code == EINTR
            if code == ERANGE {
                size *= 4
                continue
            }
            guard code == 0, let found = result else { return nil }
            return copy(found.pointee)
        }
        return nil
    }
}

extension UserDatabase.User {
    init(_ entry: passwd) {
        self.init(name: entry.pw_name.map { String(cString: $0) } ?? "", uid: entry.pw_uid, gid: entry.pw_gid)
    }
}

extension UserDatabase.Group {
    /// Copies the entry while its buffer is alive.
    init(_ entry: group) {
        var members: [String] = []
        if let list = entry.gr_mem {
            var index = 0
            while let member = list[index] {
                members.append(String(cString: member))
                index += 1
            }
        }
        self.init(name: entry.gr_name.map { String(cString: $0) } ?? "", gid: entry.gr_gid, members: members)
    }
}
