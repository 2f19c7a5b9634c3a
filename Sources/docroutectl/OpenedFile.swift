import ArgumentParser
import DocRouteClient
import DocRoutePlatform
import SystemPackage

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
        let opened: FileDescriptor
        do throws(Errno) {
            opened = try FileDescriptor.openFollowingLinks(
                atPath: cPath.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) },
                .readOnly, options: [.noControllingTerminal, .nonBlocking])
        } catch {
            // The same codes and words as docrouted's refusals of a URL.
            let shownPath = String(decoding: path, as: UTF8.self)
            let reason: String
            switch error {
            case .permissionDenied, .notPermitted: reason = "not-permitted: you (uid \(ProcessIdentity.realUserID)) cannot read \(shownPath), so docrouted will not read it for you"
            case .noSuchFileOrDirectory: reason = "not-found: \(shownPath) does not exist"
            default: reason = "\(shownPath): \(error.systemMessage)"
            }
            StandardStreams.error("cannot open \(shown): \(reason)")
            throw ExitCode.failure
        }
        self.descriptor = opened.rawValue
        self.name = String(decoding: path.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
    }

    func close() {
        FileDescriptor(rawValue: descriptor).closeIgnoringErrors()
    }
}
