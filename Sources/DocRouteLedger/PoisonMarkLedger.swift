import Foundation

/// Poison marks: one input must never stop the daemon twice (else it crashes at every restart).
///
/// A mark is written, durably, before docrouted starts walking a package and removed once it is
/// done with it, delivered or not. A mark still there at the next start means the daemon stopped
/// while it had that input in hand. If the daemon crashed (its crash marker says so), the input is
/// poisoned at once. If it was only killed (SIGKILL, power loss), the kill says nothing about the
/// input: it is tried again (an administrator's `kill -9` must not cost a document its delivery),
/// and the interruptions are counted for the reason text. The intake quarantines a poisoned input,
/// with the reason, instead of touching it again.
///
/// Synchronous: called on the batch thread, around the package it guards.
package protocol PoisonMarkLedger: AnyObject, Sendable {
    /// Marks `sourcePath` as in hand (durable before this returns).
    func markInHand(_ sourcePath: String, at date: Date) throws
    /// Removes the mark of `sourcePath`: the daemon is done with it.
    func clearInHand(_ sourcePath: String) throws
    /// At start: every mark is an input the last run stopped with. Counts the interruption, and
    /// poisons them all when that run crashed. Returns the poisoned marks.
    func settleMarks(previousRunCrashed: Bool) throws -> [PoisonMark]
}

extension PoisonMarkLedger {
    /// Marks `sourcePath` as in hand from now.
    package func markInHand(_ sourcePath: String) throws {
        try markInHand(sourcePath, at: Date())
    }
}
