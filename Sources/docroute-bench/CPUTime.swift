import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system) as `getrusage` counts it, in seconds.
enum CPUTime {
    /// The calling thread's (a baseline run on it): `RUSAGE_THREAD`, which Glibc's module leaves
    /// out (it is a GNU extension), by its value.
    static var thread: Double { usage(1) }

    /// The children waited for so far (a baseline run as a child process, once it was waited for):
    /// `RUSAGE_CHILDREN`.
    static var children: Double { usage(-1) }

    private static func usage(_ who: Int32) -> Double {
        var usage = rusage()
        guard getrusage(who, &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// Microseconds per file.
    static func perFile(_ seconds: Double, files: Int) -> Double {
        files > 0 ? seconds * 1e6 / Double(files) : 0
    }
}
