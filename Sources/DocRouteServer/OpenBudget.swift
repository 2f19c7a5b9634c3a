import DocRouteConfiguration
import Synchronization

/// What one local user may ask of `open` per minute: a number of requests and a number of bytes
/// (file sizes, URL lengths), each a bucket that refills a sixtieth of its minute's worth every
/// second. Without it any user could make docrouted copy and hash 4 GiB a request, as fast as it
/// can, into the file system the containers and the ledger share.
///
/// A request is taken while its uid has any requests and any bytes left; its bytes may take the
/// bytes below zero (one file may be larger than a minute's worth), and the uid then waits until
/// they have refilled. Root is not limited unless the configuration says so (`limit_root`).
package final class OpenBudget: Sendable {
    /// Why a request is refused, and when to try again.
    package struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
        /// Seconds until the uid has room again.
        package var retryAfterSeconds: Int
    }

    package let requestsPerMinute: Int
    package let bytesPerMinute: Int64
    package let limitsRoot: Bool

    struct Bucket {
        var requests: Double
        var bytes: Double
        var updated: ContinuousClock.Instant
    }

    private let buckets = Mutex<[UInt32: Bucket]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    /// A budget of `requestsPerMinute` requests and `bytesPerMinute` bytes per uid; `now` is the
    /// clock (tests move it by hand).
    package init(requestsPerMinute: Int, bytesPerMinute: Int64, limitsRoot: Bool = false,
                 now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.requestsPerMinute = max(1, requestsPerMinute)
        self.bytesPerMinute = max(1, bytesPerMinute)
        self.limitsRoot = limitsRoot
        self.now = now
    }

    /// The budget a configuration sets.
    package convenience init(_ configuration: DaemonConfiguration) {
        self.init(requestsPerMinute: configuration.openRequestsPerMinute, bytesPerMinute: configuration.openBytesPerMinute,
                  limitsRoot: configuration.limitRoot)
    }

    /// Whether `uid` is held to the per-uid limits (its requests, and what they leave owed).
    package func limits(_ uid: UInt32) -> Bool { uid != 0 || limitsRoot }

    /// Takes one request of `uid` from its budget, or says when it may ask again.
    package func takeRequest(_ uid: UInt32) -> Result<Void, Refusal> {
        take(uid, requests: 1, bytes: 0)
    }

    /// Takes `bytes` (a file's size, a URL's length) of `uid` from its budget, or says when it may
    /// ask again.
    package func takeBytes(_ uid: UInt32, _ bytes: Int64) -> Result<Void, Refusal> {
        take(uid, requests: 0, bytes: bytes)
    }

    private func take(_ uid: UInt32, requests: Int, bytes: Int64) -> Result<Void, Refusal> {
        guard limits(uid) else { return .success(()) }
        let instant = now()
        let requestRate = Double(requestsPerMinute) / 60
        let byteRate = Double(bytesPerMinute) / 60
        return buckets.withLock { buckets in
            var bucket = buckets[uid] ?? Bucket(requests: Double(requestsPerMinute), bytes: Double(bytesPerMinute), updated: instant)
            let elapsed = Self.seconds(instant - bucket.updated)
            bucket.requests = min(Double(requestsPerMinute), bucket.requests + elapsed * requestRate)
            bucket.bytes = min(Double(bytesPerMinute), bucket.bytes + elapsed * byteRate)
            bucket.updated = instant
            defer {
                buckets[uid] = bucket
                if buckets.count > Self.remembered { Self.forgetFull(&buckets, at: instant, requestRate: requestRate, byteRate: byteRate, limits: self) }
            }
            if requests > 0 && bucket.requests < 1 {
                let wait = Int(((1 - bucket.requests) / requestRate).rounded(.up))
                return .failure(Refusal(
                    description: "uid \(uid) sent more than \(requestsPerMinute) open requests in the last minute (open_requests_per_minute); try again in \(wait) s",
                    retryAfterSeconds: wait))
            }
            if bytes > 0 && bucket.bytes <= 0 {
                let wait = Int(((1 - bucket.bytes) / byteRate).rounded(.up))
                return .failure(Refusal(
                    description: "uid \(uid) opened more than \(bytesPerMinute) bytes in the last minute (open_bytes_per_minute); try again in \(wait) s",
                    retryAfterSeconds: wait))
            }
            bucket.requests -= Double(requests)
            bucket.bytes -= Double(bytes)
            return .success(())
        }
    }

    /// Buckets kept before the full ones are forgotten (a full bucket is what a new uid gets).
    static let remembered = 1024

    private static func forgetFull(_ buckets: inout [UInt32: Bucket], at instant: ContinuousClock.Instant,
                                   requestRate: Double, byteRate: Double, limits: OpenBudget) {
        buckets = buckets.filter { _, bucket in
            let elapsed = seconds(instant - bucket.updated)
            return bucket.requests + elapsed * requestRate < Double(limits.requestsPerMinute)
                || bucket.bytes + elapsed * byteRate < Double(limits.bytesPerMinute)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
