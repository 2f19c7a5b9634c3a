import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to standard output and standard error.
///
/// Each call is whole lines in one `write(2)` loop, so a line never interleaves with the output
/// of a child process, and a reader of a pipe sees it at once (print() buffers when stdout is a pipe).
enum StandardStreams {
    /// Writes bytes to standard output as they are.
    static func output(_ bytes: [UInt8]) {
        write(bytes, to: STDOUT_FILENO)
    }

    /// Writes a line of text (a newline is added) to standard output.
    static func output(line: String) {
        output(Array((line + "\n").utf8))
    }

    /// Writes a line of text (a newline is added) to standard error, prefixed with `docroutectl: `.
    static func error(_ line: String) {
        write(Array(("docroutectl: " + line + "\n").utf8), to: STDERR_FILENO)
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                // A closed stdout (a reader that went away) leaves nothing to tell.
                return
            }
            offset += written
        }
    }
}
