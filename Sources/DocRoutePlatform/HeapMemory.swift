import CDocRouteShim

/// The C library's heap, as a whole.
package enum HeapMemory {
    /// Gives freed heap memory back to the kernel (`malloc_trim(0)`), so a burst's buffers do not
    /// stay resident once they are freed; true when any was released. Only a hint: the memory is
    /// free either way, so nothing can fail.
    @discardableResult
    package static func releaseFreeMemory() -> Bool {
        docroute_release_free_memory() == 1
    }
}
