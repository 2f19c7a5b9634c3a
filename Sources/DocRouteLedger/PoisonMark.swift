import Foundation

/// A poison mark left by a run that stopped with an input in hand (see ``PoisonMarkLedger``).
package struct PoisonMark: Sendable, Hashable {
    /// The input's path in its inbox.
    package var sourcePath: String
    /// When the run that stopped took it in hand.
    package var startedAt: Date
    /// How many runs stopped with it in hand.
    package var interruptions: Int
    /// Whether it must not be touched again (a run crashed with it in hand).
    package var poisoned: Bool

    package init(sourcePath: String, startedAt: Date, interruptions: Int, poisoned: Bool) {
        self.sourcePath = sourcePath
        self.startedAt = startedAt
        self.interruptions = interruptions
        self.poisoned = poisoned
    }
}
