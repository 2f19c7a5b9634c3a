extension MailParser {
    /// Bounds that keep one hostile message from costing unbounded memory or time.
    package struct Limits: Sendable, Hashable {
        /// The most bytes of one header section (the message's own, or one part's). Postfix's own
        /// default is 100 KiB; 256 KiB leaves room for long recipient lists. Over it, the message
        /// (its own header) or the part (a part's header) is not read.
        package var maximumHeaderBytes: Int
        /// The deepest nesting of multiparts and forwarded messages read; deeper parts are skipped.
        package var maximumDepth: Int
        /// The most parts of one message; later parts are skipped.
        package var maximumParts: Int
        /// The longest boundary parameter taken (RFC 2046 allows 70).
        package var maximumBoundaryLength: Int
        /// The most problems listed in a summary.
        package var maximumProblems: Int

        /// Creates limits; the defaults suit mail from the open Internet.
        package init(
            maximumHeaderBytes: Int = 256 * 1024,
            maximumDepth: Int = 32,
            maximumParts: Int = 10_000,
            maximumBoundaryLength: Int = 256,
            maximumProblems: Int = 100
        ) {
            self.maximumHeaderBytes = max(1024, maximumHeaderBytes)
            self.maximumDepth = max(1, maximumDepth)
            self.maximumParts = max(1, maximumParts)
            self.maximumBoundaryLength = max(70, maximumBoundaryLength)
            self.maximumProblems = max(1, maximumProblems)
        }
    }
}
