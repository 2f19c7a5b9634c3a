@testable import DocRoutePlatform
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The heap settings docrouted makes first thing (``ProcessLimits``).
@Suite struct ProcessLimitsTests {
    /// A large block gets a mapping of its own, given back to the kernel when it is freed, even
    /// after a larger mapped block was freed before it (as a delivery batch's 1 MiB copy buffer
    /// is before the next batch's item arrays): left to itself, glibc raises its threshold to that
    /// larger size and grows an arena for the block, whose pages stay resident. Run in a process
    /// of its own, whose heap no other test has left free room in.
    @Test func largeBlocksAreMappedAfterALargerBlockWasFreed() async {
        await #expect(processExitsWith: .success) {
            ProcessLimits.fixMallocMapThreshold()
            guard let large = malloc(16 << 20) else { exit(2) }
            memset(large, 1, 16 << 20)
            free(large)
            guard let block = malloc(8 << 20) else { exit(2) }
            // glibc puts a mapped block right after its 16-byte header at the start of a page; a
            // block from an arena sits wherever the arena had room.
            exit(UInt(bitPattern: block) % 4096 == 16 ? 0 : 1)
        }
    }
}
