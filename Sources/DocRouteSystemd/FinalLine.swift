import DocRoutePlatform
import Foundation
import Logging
import SystemPackage

/// The last line a process writes before it exits on an error: the one line that must not be
/// lost, since it is all an administrator gets.
///
/// An ordinary log call writes once and drops the line when the write fails. Under I/O faults (a
/// stderr pipe that is full for a moment, `EINTR`, a short write, a journal socket that refuses
/// an entry) a daemon that failed to start then exited 1 with no word said. This writes to the
/// journal when logging goes there, retried, then to stderr, retried, when the journal did not
/// take it or logging goes to stderr.
package enum FinalLine {
    /// How long the line may wait for a full stderr or a failing journal, in all.
    package static let patience: Duration = .seconds(5)

    /// Writes `message` (one line, without its newline) where `destination` says logs go; true
    /// when it went out somewhere.
    @discardableResult
    package static func report(_ message: String, destination: LoggingBootstrap.Destination, syslogIdentifier: String,
                              level: Logger.Level = .critical, file: String = #fileID, function: String = #function,
                              line: UInt = #line) -> Bool {
        let deadline = ContinuousClock.now + patience
        if destination == .journal {
            let entry = JournalEntry(level: level, message: message, file: file, function: function, line: line,
                                     syslogIdentifier: syslogIdentifier)
            while true {
                if JournalLogHandler.send(entry) >= 0 { return true }
                guard ContinuousClock.now < deadline else { break }
                pause()
            }
        }
        return writeAll(Array("\(syslogIdentifier): \(message)\n".utf8), to: StandardStream.error.descriptor.rawValue, until: deadline)
    }

    /// Writes all of `bytes` to `descriptor`: again after `EINTR` and after a short write, after
    /// waiting for room on `EAGAIN` (a non-blocking pipe that is full), and after a moment on any
    /// other error, until `deadline`. True when every byte was written.
    package static func writeAll(_ bytes: [UInt8], to descriptor: CInt, until deadline: ContinuousClock.Instant) -> Bool {
        let stream = FileDescriptor(rawValue: descriptor)
        var offset = 0
        while offset < bytes.count {
            // writeOnce retries EINTR itself.
            let written: Result<Int, Errno> = bytes[offset...].withUnsafeBytes { buffer in
                Result { () throws(Errno) in try stream.writeOnce(from: buffer) }
            }
            if case .success(let count) = written, count > 0 {
                offset += count
                continue
            }
            guard ContinuousClock.now < deadline else { return false }
            if case .failure(let error) = written, error == .resourceTemporarilyUnavailable || error == .wouldBlock {
                _ = try? stream.waitUntilWritable(timeoutMilliseconds: 50)
                continue
            }
            // EIO, ENOSPC and the like can be passing faults: the line is worth a few retries.
            pause()
        }
        return true
    }

    private static func pause() {
        Thread.sleep(forTimeInterval: 0.02)
    }
}
