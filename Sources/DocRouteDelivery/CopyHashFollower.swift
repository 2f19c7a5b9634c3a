import Crypto
import DocRouteLedger
import DocRoutePlatform
import Foundation
import SystemPackage

/// Hashes a large file on a thread of its own while the kernel copies it, a step behind the copy:
/// the file then costs the longer of the two, not their sum (two cores).
///
/// The copying thread reports each range it finished with ``copied(upTo:)`` and ends with
/// ``finish()``; ``digest()`` waits for the hash of everything copied. The bytes hashed are read
/// from the descriptor the kernel copies from, not back from the copy: reading a copy while it is
/// being written back to disk made a 1 GiB delivery's copy step 2.7 s instead of 1.0 s here. The
/// source is checked unchanged after the copy (size, modification time), and recovery compares a
/// copy with its recorded digest before it trusts it.
package final class CopyHashFollower: @unchecked Sendable {
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var copiedUpTo: Int64 = 0
    private var copyEnded = false
    private var outcome: Result<(digest: String, hashed: Int64), DeliveryError>?

    private let source: FileDescriptor
    private let path: String

    /// Starts the hashing thread for `source`, described as `path` in errors.
    init(source: FileDescriptor, path: String) {
        self.source = source
        self.path = path
        let thread = Thread { [self] in run() }
        thread.name = "docroute-hash"
        thread.start()
    }

    /// Bytes `0..<offset` of the copy are written.
    func copied(upTo offset: Int64) {
        condition.lock()
        copiedUpTo = offset
        condition.signal()
        condition.unlock()
    }

    /// The copy ended (done, or failed): the thread hashes what was reported, then stops.
    func finish() {
        condition.lock()
        copyEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// The SHA-256 (lowercase hex) of the bytes reported copied and how many there were; waits
    /// for the thread. Call ``finish()`` first.
    func digest() throws -> (digest: String, hashed: Int64) {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        return try outcome!.get()
    }

    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var hash = SHA256()
        var hashed: Int64 = 0
        reading: while true {
            condition.lock()
            while copiedUpTo <= hashed && !copyEnded { condition.wait() }
            let limit = copiedUpTo
            let ended = copyEnded
            condition.unlock()
            if limit <= hashed && ended { break reading }
            while hashed < limit {
                let wanted = Int(min(Int64(buffer.count), limit - hashed))
                do {
                    let count = try DeliveryError.performing("read", path) { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), atOffset: hashed) }
                    guard count > 0 else {
                        return deliver(.failure(DeliveryError(code: .changed, message: "\(path) ended after \(hashed) bytes while it was being hashed. \(DeliveryError.advice(for: .changed))")))
                    }
                    hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    hashed += Int64(count)
                } catch {
                    return deliver(.failure(DeliveryLedger.ledgerError("hash the copy", error)))
                }
            }
        }
        deliver(.success((SandboxWriter.hex(hash.finalize()), hashed)))
    }

    private func deliver(_ result: Result<(digest: String, hashed: Int64), DeliveryError>) {
        condition.lock()
        outcome = result
        condition.broadcast()
        condition.unlock()
    }
}
