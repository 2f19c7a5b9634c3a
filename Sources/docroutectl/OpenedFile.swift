import ArgumentParser
import DocRouteClient
#if canImport(Glibc)
import Glibc
#endif

/// A file `docroutectl open` opened as the user, to pass its descriptor to docrouted.
struct OpenedFile {
    let descriptor: Int32
    /// The file name docrouted types the document by (the path's last component unless changed).
    var name: String

    /// Opens the file a `file://` URL names, read-only. `O_NONBLOCK` keeps a FIFO from blocking
    /// the open; docrouted refuses anything but a regular file and says so.
    init(url: String, shown: String) throws {
        let path: [UInt8]
        do {
            path = try FileURL.path(fromURLString: url)
        } catch {
            throw ValidationError("\(shown): \(error.message)")
        }
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        var descriptor: Int32
        repeat {
            descriptor = Glibc.open(cPath, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            // The same codes and words as docrouted's refusals of a URL.
            let code = errno
            let shownPath = String(decoding: path, as: UTF8.self)
            let reason: String
            switch code {
            case EACCES, EPERM: reason = "not-permitted: you (uid \(getuid())) cannot read \(shownPath), so docrouted will not read it for you"
            case ENOENT: reason = "not-found: \(shownPath) does not exist"
            default: reason = "\(shownPath): \(String(cString: strerror(code)))"
            }
            StandardStreams.error("cannot open \(shown): \(reason)")
            throw ExitCode.failure
        }
        self.descriptor = descriptor
        self.name = String(decoding: path.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
