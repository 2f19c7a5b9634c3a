import SystemPackage

/// The process's standard output or standard error, written unbuffered: for log lines and for a
/// command's output, which a reader of a pipe sees at once.
package enum StandardStream: Sendable {
    /// Standard output (descriptor 1).
    case output
    /// Standard error (descriptor 2).
    case error

    /// The stream's descriptor.
    package var descriptor: FileDescriptor {
        switch self {
        case .output: .standardOutput
        case .error: .standardError
        }
    }

    /// Writes all of `bytes` in as few `write(2)` calls as the kernel allows (one, for a line of a
    /// few kilobytes, so it never interleaves with another process's output), again after `EINTR`
    /// and after a short write; throws the first other error (`EPIPE` once a reader went away).
    /// Not a fault point: a `DOCROUTE_FAULT` rule aimed at the daemon's file writes must not take
    /// a log line instead.
    package func write(_ bytes: [UInt8]) throws(Errno) {
        let descriptor = self.descriptor
        var offset = 0
        while offset < bytes.count {
            let written = try bytes[offset...].withUnsafeBytes { buffer in
                Result { () throws(Errno) in try descriptor.writeOnce(from: buffer) }
            }.get()
            // write(2) of a non-empty buffer returns 0 only where nothing can be written at all.
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Whether the stream is a terminal (`isatty(3)`): a person watching, rather than a pipe or a file.
    package var isTerminal: Bool {
        descriptor.isTerminal
    }
}
