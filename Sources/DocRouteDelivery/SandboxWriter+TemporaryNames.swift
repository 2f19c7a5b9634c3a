import DocRoutePlatform
import SystemPackage

extension SandboxWriter {
    /// Random names for temporaries, 64 bits each, drawn from one `getrandom(2)` of 64 names at
    /// a time instead of one call per copy (a system call a file in a burst).
    ///
    /// The names stay unpredictable to the handler whose folder they are made in (it could
    /// otherwise create them first and make every `O_EXCL` open fail); a name taken anyway is
    /// tried again with the next.
    package struct TemporaryNames {
        private var pool = [UInt64](repeating: 0, count: 64)
        private var used = 64

        /// An empty pool: the first name draws the first 64.
        package init() {}

        /// The next random name, `.docroute-<16 hex digits>.tmp`.
        package mutating func next() -> String {
            if used == pool.count { refill() }
            defer { used += 1 }
            return SandboxWriter.temporaryPrefix + SandboxWriter.hex(withUnsafeBytes(of: pool[used]) { Array($0) }) + SandboxWriter.temporarySuffix
        }

        private mutating func refill() {
            // Through a Result: a typed-throws closure given to withUnsafeMutableBytes crashes
            // Swift 6.3's IRGen.
            let filled = pool.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try RandomBytes.fill(buffer) }
            }
            if case .failure = filled {
                // getrandom refused (a seccomp filter): the standard generator, one call a name.
                var generator = SystemRandomNumberGenerator()
                for index in pool.indices { pool[index] = generator.next() }
            }
            used = 0
        }
    }
}
