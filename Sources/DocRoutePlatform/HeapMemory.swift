import CDocRouteShim

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The C library's heap, as a whole.
package enum HeapMemory {
    /// Gives freed heap memory back to the kernel (`malloc_trim(0)`), so a burst's buffers do not
    /// stay resident once they are freed; true when any was released. Only a hint: the memory is
    /// free either way, so nothing can fail.
    @discardableResult
    package static func releaseFreeMemory() -> Bool {
        docroute_release_free_memory() == 1
    }

    /// `free(3)` of memory a C library allocated and handed over (libsystemd's socket names).
    package static func release(_ pointer: UnsafeMutableRawPointer?) {
        free(pointer)
    }
}
