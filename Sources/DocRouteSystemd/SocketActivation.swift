import CDocRouteSystemd
import DocRoutePlatform
import SystemPackage

/// The sockets that systemd opened for the service (`docroute.socket`) and passed at start.
///
/// Reading them clears `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` from the environment so that
/// handlers the daemon launches later do not believe the sockets are theirs; the descriptors
/// themselves are close-on-exec. Read them once, early, and keep this value.
package struct SocketActivation: Sendable {
    /// The `FileDescriptorName=` that `docroute.socket` gives its listening socket.
    package static let docrouteSocketName = "docroute"

    /// Every descriptor passed to this process, in order; empty when not socket-activated.
    package let descriptors: [ListenedDescriptor]

    /// Takes the passed descriptors from the environment (see ``listenedDescriptors()``).
    package init() throws(SystemdError) {
        self.descriptors = try Self.listenedDescriptors()
    }

    /// Wraps descriptors obtained elsewhere.
    package init(descriptors: [ListenedDescriptor]) {
        self.descriptors = descriptors
    }

    /// Calls `sd_listen_fds_with_names(1, …)`: the descriptors systemd passed, with their names,
    /// removing the `LISTEN_*` variables from the environment.
    ///
    /// Returns an empty list when the process was not socket-activated (or the variables name
    /// another process), so a daemon can fall back to binding its socket itself.
    package static func listenedDescriptors() throws(SystemdError) -> [ListenedDescriptor] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                for index in 0..<Int(max(count, 0)) { HeapMemory.release(names[index]) }
                HeapMemory.release(names)
            }
        }
        if count < 0 {
            throw SystemdError(
                code: .socketActivationFailed,
                message: "the LISTEN_FDS/LISTEN_FDNAMES variables this process was started with are "
                    + "malformed; start docrouted from docroute.socket or without them",
                cause: Errno(rawValue: -count)
            )
        }
        return (0..<count).map { offset in
            let name = names?[Int(offset)].map { String(cString: $0) } ?? "unknown"
            return ListenedDescriptor(fileDescriptor: SD_LISTEN_FDS_START + offset, name: name)
        }
    }

    /// The passed descriptor with this `FileDescriptorName=`, checked to be a listening `AF_UNIX`
    /// stream socket, or `nil` when none has that name (not socket-activated).
    ///
    /// - Throws: ``SystemdError/Code/notAUnixStreamListener`` when the descriptor is something else,
    ///   e.g. a datagram socket or a TCP port from a misedited socket unit.
    package func descriptor(named name: String = SocketActivation.docrouteSocketName) throws(SystemdError) -> CInt? {
        guard let passed = descriptors.first(where: { $0.name == name }) else { return nil }
        try Self.requireListeningUnixStreamSocket(passed)
        return passed.fileDescriptor
    }

    static func requireListeningUnixStreamSocket(_ passed: ListenedDescriptor) throws(SystemdError) {
        let result = sd_is_socket_unix(passed.fileDescriptor, FileDescriptor.streamSocketType, 1, nil, 0)
        if result < 0 {
            throw SystemdError(
                code: .socketInspectionFailed,
                message: "could not inspect passed descriptor \(passed.fileDescriptor) named '\(passed.name)'",
                cause: Errno(rawValue: -result)
            )
        }
        if result == 0 {
            throw SystemdError(
                code: .notAUnixStreamListener,
                message: "descriptor \(passed.fileDescriptor) named '\(passed.name)' is not a listening "
                    + "AF_UNIX stream socket; its socket unit must use ListenStream= with an absolute "
                    + "path, not a port, ListenDatagram= or Accept=yes"
            )
        }
    }
}
