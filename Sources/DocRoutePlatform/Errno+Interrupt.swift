import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Errno {
    /// Calls `body` until it does not fail with `EINTR`; -1 becomes the `errno` it left.
    @inline(__always)
    package static func result<Value: SignedInteger>(retryingOnInterrupt body: () -> Value) -> Result<Value, Errno> {
        while true {
            let result = body()
            if result != -1 { return .success(result) }
            let error = Errno(rawValue: Glibc.errno)
            if error != .interrupted { return .failure(error) }
        }
    }

    /// Calls `body` until it does not fail with `EINTR`; -1 throws the `errno` it left.
    @inline(__always)
    package static func retryingOnInterrupt<Value: SignedInteger>(_ body: () -> Value) throws(Errno) -> Value {
        try result(retryingOnInterrupt: body).get()
    }
}
