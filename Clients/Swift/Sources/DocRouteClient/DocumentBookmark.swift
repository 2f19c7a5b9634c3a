import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A reference to a delivered document that finds it again after it was renamed or moved inside
/// its handler's container, across restarts: Foundation's bookmark data, for docroute handlers.
///
/// The container is the handler's sandbox root, the folder that holds `Documents/`. It is given,
/// or found by walking up from the document to the nearest folder named `Documents` and taking
/// its parent. The bookmark records the path relative to the container, the device and inode,
/// size, modification time and a digest of the first bytes, as opaque, versioned ``data``.
///
/// ``resolve(container:)`` tries the recorded path first. If that path is gone or holds another
/// file, the container is searched (a bounded walk that never follows a symbolic link) for the
/// same device and inode, then for a file of the same size and digest; a document found that way
/// is reported with `isStale` true, so the caller can make a fresh bookmark (an empty document is
/// never matched by digest: every empty file would match). A bookmark never resolves outside the
/// container it was made in, and, unless the caller names the container, only in one of the
/// caller's own.
///
/// ```swift
/// let bookmark = try DocumentBookmark(url: documentURL)
/// save(bookmark.data)
/// // later, after a restart:
/// let found = try DocumentBookmark(data: saved).resolve()
/// if found.isStale { save(try DocumentBookmark(url: found.url).data) }
/// ```
public struct DocumentBookmark: Sendable, Hashable {
    /// The format version written into ``data``.
    public static let version = 1
    static let magic = Array("DRBM".utf8)
    /// How many leading bytes the digest covers.
    static let digestPrefixLength = 4096
    /// The search visits at most this many entries and this many folder levels.
    static let searchEntryLimit = 100_000
    static let searchDepthLimit = 64

    struct Record: Codable, Hashable, Sendable {
        var container: String
        var containerDevice: UInt64
        var containerInode: UInt64
        var path: String
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var digest: String
    }

    let record: Record

    /// The container the bookmark was made in.
    public var containerURL: URL { URL(fileURLWithPath: record.container, isDirectory: true) }
    /// The document's path relative to the container when the bookmark was made.
    public var relativePath: String { record.path }

    /// What ``resolve(container:)`` found.
    public struct Resolution: Sendable, Hashable {
        /// Where the document is now.
        public var url: URL
        /// The document was not at its recorded path and had to be searched for.
        public var isStale: Bool
    }

    /// Makes a bookmark for the document at `url`, inside `container` (default: the parent of
    /// the nearest `Documents` folder above it). No symbolic link is followed below the container.
    public init(url: URL, container: URL? = nil) throws(DocumentBookmarkError) {
        let path = url.standardizedFileURL.path
        guard let root = container?.standardizedFileURL.path ?? Self.container(ofPath: path) else {
            throw DocumentBookmarkError(.notInContainer, "\(path) is not inside a container (no Documents folder above it); give the container")
        }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            throw DocumentBookmarkError(.notInContainer, "\(path) is not inside the container \(root)")
        }
        let relative = String(path.dropFirst(prefix.count))
        let folder = try Self.openContainer(root)
        defer { close(folder.descriptor) }
        let file = try Self.openBeneath(folder.descriptor, relative, shown: path)
        defer { close(file.descriptor) }
        record = Record(
            container: root, containerDevice: folder.device, containerInode: folder.inode, path: relative,
            device: file.device, inode: file.inode, size: file.size, modified: file.modified,
            digest: try Self.digest(of: file.descriptor, size: file.size, shown: path))
    }

    /// Reads bookmark data made by ``data``.
    public init(data: Data) throws(DocumentBookmarkError) {
        let bytes = Array(data)
        guard bytes.count > Self.magic.count + 1, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw DocumentBookmarkError(.invalidData, "the data is not a docroute bookmark")
        }
        let version = Int(bytes[Self.magic.count])
        guard version == Self.version else {
            throw DocumentBookmarkError(.invalidData, "bookmark version \(version) is not one this library reads (it reads \(Self.version)); make the bookmark again")
        }
        do {
            record = try JSONDecoder().decode(Record.self, from: Data(bytes[(Self.magic.count + 1)...]))
        } catch {
            throw DocumentBookmarkError(.invalidData, "the bookmark data is damaged: \(error)")
        }
    }

    /// The bookmark as opaque data: a magic, the version, then the record.
    public var data: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding a struct of strings and integers cannot fail.
        let body = (try? encoder.encode(record)) ?? Data()
        return Data(Self.magic + [UInt8(Self.version)]) + body
    }

    /// Finds the document: at its recorded path, else by searching the container. `container`
    /// is where the container is now (default: where it was); it must be the same folder
    /// (device and inode) the bookmark was made in.
    ///
    /// Without `container`, the container is taken from the bookmark data, which whoever handed
    /// it over may have written: it is searched only when it is the caller's own (owned by the
    /// effective user) and a container at all (it holds a `Documents` folder). Anything else,
    /// such as `/` or another handler's sandbox, must be named by the caller.
    public func resolve(container: URL? = nil) throws(DocumentBookmarkError) -> Resolution {
        let root = container?.standardizedFileURL.path ?? record.container
        let folder = try Self.openContainer(root)
        defer { close(folder.descriptor) }
        guard folder.device == record.containerDevice, folder.inode == record.containerInode else {
            throw DocumentBookmarkError(.otherContainer, "the bookmark was made in the container \(record.container), and \(root) is another one; a bookmark resolves only in its own container")
        }
        if container == nil { try Self.checkOwnContainer(folder.descriptor, root) }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        var recordedPathIsLink = false
        var recordedPathHoldsFile = false
        do {
            let file = try Self.openBeneath(folder.descriptor, record.path, shown: prefix + record.path)
            close(file.descriptor)
            if file.device == record.device, file.inode == record.inode {
                return Resolution(url: URL(fileURLWithPath: prefix + record.path), isStale: false)
            }
            recordedPathHoldsFile = true
        } catch where error.code == .symbolicLink {
            recordedPathIsLink = true
        } catch where error.code == .notFound {
        }
        var search = Search(device: record.device, inode: record.inode, size: record.size)
        search.walk(folder.descriptor, relative: "", depth: 0)
        if let found = search.inodeMatch {
            return Resolution(url: URL(fileURLWithPath: prefix + found), isStale: true)
        }
        // An empty document's digest covers no bytes: every empty file would match it.
        for candidate in search.sizeMatches where record.size > 0 {
            guard let file = try? Self.openBeneath(folder.descriptor, candidate, shown: prefix + candidate) else { continue }
            defer { close(file.descriptor) }
            if (try? Self.digest(of: file.descriptor, size: file.size, shown: candidate)) == record.digest {
                return Resolution(url: URL(fileURLWithPath: prefix + candidate), isStale: true)
            }
        }
        if recordedPathHoldsFile {
            // Replaced by another file and not found elsewhere (an editor that saved by rename and
            // changed it): what stands at the document's path now is the best answer.
            return Resolution(url: URL(fileURLWithPath: prefix + record.path), isStale: true)
        }
        if recordedPathIsLink {
            throw DocumentBookmarkError(.symbolicLink, "\(prefix + record.path) is now a symbolic link (or passes through one) and the document is nowhere else in the container; a bookmark never follows links")
        }
        throw DocumentBookmarkError(.notFound, "the document \(record.path) is gone: not at its path and nowhere in the container \(root)")
    }

    /// The container of the file at `path`: the parent of the nearest folder named `Documents` above it.
    public static func container(ofPath path: String) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let index = components.dropLast().lastIndex(of: "Documents") else { return nil }
        return "/" + components[..<index].joined(separator: "/")
    }

    // MARK: File reference URLs

    /// The file reference URL of this document: `file:///.file/id=<device>.<inode>/`.
    public var fileReferenceURL: URL {
        URL(string: "file:///.file/id=\(record.device).\(record.inode)/")!
    }

    /// The file reference URL of the file at `url` (it must exist; links are not followed).
    public static func fileReferenceURL(for url: URL) throws(DocumentBookmarkError) -> URL {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw DocumentBookmarkError(errno == ENOENT ? .notFound : .unreadable, "\(url.path): \(String(cString: strerror(errno)))")
        }
        return URL(string: "file:///.file/id=\(UInt64(info.st_dev)).\(UInt64(info.st_ino))/")!
    }

    /// Resolves a file reference URL within `container`, while the file exists there.
    public static func resolveFileReference(_ url: URL, in container: URL) throws(DocumentBookmarkError) -> URL {
        let text = url.absoluteString
        let prefix = "file:///.file/id="
        let parts = text.hasPrefix(prefix) ? text.dropFirst(prefix.count).split(separator: "/").first?.split(separator: ".") : nil
        guard let parts, parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
            throw DocumentBookmarkError(.invalidData, "\(text) is not a file reference URL (file:///.file/id=<device>.<inode>/)")
        }
        let root = container.standardizedFileURL.path
        let folder = try openContainer(root)
        defer { close(folder.descriptor) }
        var search = Search(device: device, inode: inode, size: -1)
        search.walk(folder.descriptor, relative: "", depth: 0)
        guard let found = search.inodeMatch else {
            throw DocumentBookmarkError(.notFound, "no file in the container \(root) is \(text)")
        }
        return URL(fileURLWithPath: (root.hasSuffix("/") ? root : root + "/") + found)
    }

    // MARK: File system

    struct OpenFile {
        var descriptor: Int32
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }

    static func openContainer(_ path: String) throws(DocumentBookmarkError) -> OpenFile {
        let descriptor = retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else {
            throw DocumentBookmarkError(errno == ENOENT ? .notFound : .unreadable, "the container \(path) cannot be opened: \(String(cString: strerror(errno)))")
        }
        return try described(descriptor, shown: path)
    }

    /// Refuses a container the bookmark names but the caller did not: one that is not the
    /// effective user's own, or holds no `Documents` folder (so is no container).
    static func checkOwnContainer(_ descriptor: Int32, _ root: String) throws(DocumentBookmarkError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw DocumentBookmarkError(.unreadable, "the container \(root): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == geteuid() else {
            throw DocumentBookmarkError(.otherContainer, "the bookmark names the container \(root), which belongs to uid \(info.st_uid), not to uid \(geteuid()) resolving it; name the container (--container) to resolve it there")
        }
        var documents = stat()
        guard fstatat(descriptor, "Documents", &documents, AT_SYMLINK_NOFOLLOW) == 0, (documents.st_mode & S_IFMT) == S_IFDIR else {
            throw DocumentBookmarkError(.notInContainer, "the bookmark names \(root), which holds no Documents folder and so is no container; name the container (--container) to resolve it there")
        }
    }

    /// Opens `relative` below `root` one component at a time with `O_NOFOLLOW`, so neither a
    /// link in place of the file nor one in place of a folder of its path is followed.
    static func openBeneath(_ root: Int32, _ relative: String, shown: String) throws(DocumentBookmarkError) -> OpenFile {
        let components = relative.split(separator: "/").map(String.init)
        guard !components.isEmpty, !components.contains(".."), !components.contains(".") else {
            throw DocumentBookmarkError(.notInContainer, "\(relative) does not name a file below the container")
        }
        var folder = root
        defer { if folder != root { close(folder) } }
        for (index, component) in components.enumerated() {
            let last = index == components.count - 1
            let flags = last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
            let next = retrying { openat(folder, component, flags) }
            guard next >= 0 else {
                var code = errno
                // O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR, not ELOOP: ask what it is.
                var info = stat()
                if code == ENOTDIR, fstatat(folder, component, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
                    code = ELOOP
                }
                switch code {
                case ENOENT, ENOTDIR: throw DocumentBookmarkError(.notFound, "\(shown) does not exist")
                case ELOOP: throw DocumentBookmarkError(.symbolicLink, "\(shown): \(component) is a symbolic link, which a bookmark never follows")
                default: throw DocumentBookmarkError(.unreadable, "\(shown): \(String(cString: strerror(code)))")
                }
            }
            if folder != root { close(folder) }
            folder = next
            if last {
                defer { folder = root }
                let file = try described(next, shown: shown)
                var info = stat()
                fstat(next, &info)
                guard (info.st_mode & S_IFMT) == S_IFREG else {
                    close(next)
                    throw DocumentBookmarkError(.notFound, "\(shown) is not a regular file")
                }
                return file
            }
        }
        throw DocumentBookmarkError(.notFound, "\(shown) does not exist")
    }

    static func described(_ descriptor: Int32, shown: String) throws(DocumentBookmarkError) -> OpenFile {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw DocumentBookmarkError(.unreadable, "\(shown): \(message)")
        }
        return OpenFile(
            descriptor: descriptor, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// SHA-256 of the first bytes (at most ``digestPrefixLength``), its first 16 bytes in hex.
    static func digest(of descriptor: Int32, size: Int64, shown: String) throws(DocumentBookmarkError) -> String {
        var head = [UInt8](repeating: 0, count: Int(min(Int64(digestPrefixLength), max(size, 0))))
        var filled = 0
        while filled < head.count {
            let count = head.withUnsafeMutableBytes { buffer in
                retrying { pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(filled)) }
            }
            guard count >= 0 else { throw DocumentBookmarkError(.unreadable, "\(shown): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            filled += count
        }
        return SHA256.hash(data: head[..<filled]).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    static func retrying<T: FixedWidthInteger & SignedInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// A bounded walk of a container that never follows a symbolic link.
    struct Search {
        let device: UInt64
        let inode: UInt64
        /// Files of this size are remembered for the digest comparison (-1: none).
        let size: Int64
        var inodeMatch: String?
        var sizeMatches: [String] = []
        var visited = 0

        init(device: UInt64, inode: UInt64, size: Int64) {
            self.device = device
            self.inode = inode
            self.size = size
        }

        mutating func walk(_ folder: Int32, relative: String, depth: Int) {
            guard inodeMatch == nil, depth < DocumentBookmark.searchDepthLimit else { return }
            let copy = dup(folder)
            guard copy >= 0, let stream = fdopendir(copy) else {
                if copy >= 0 { close(copy) }
                return
            }
            defer { closedir(stream) }
            var folders: [String] = []
            while let entry = readdir(stream) {
                visited += 1
                if visited > DocumentBookmark.searchEntryLimit || inodeMatch != nil { return }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                var info = stat()
                guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                let path = relative.isEmpty ? name : relative + "/" + name
                switch info.st_mode & S_IFMT {
                case S_IFREG:
                    if UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode {
                        inodeMatch = path
                        return
                    }
                    if Int64(info.st_size) == size { sizeMatches.append(path) }
                case S_IFDIR:
                    folders.append(name)
                default:
                    // Symbolic links and special files are never entered or matched.
                    continue
                }
            }
            for name in folders.sorted() {
                let child = DocumentBookmark.retrying { openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                guard child >= 0 else { continue }
                walk(child, relative: relative.isEmpty ? name : relative + "/" + name, depth: depth + 1)
                close(child)
                if inodeMatch != nil || visited > DocumentBookmark.searchEntryLimit { return }
            }
        }
    }
}
