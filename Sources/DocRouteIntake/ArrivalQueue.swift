/// Files waiting for intake, each once however many times an event or a scan reports it.
package struct ArrivalQueue {
    package struct Arrival: Hashable {
        package var folder: WatchedFolder
        var name: [UInt8]
    }

    private(set) var order: [Arrival] = []
    private var head = 0
    private var queued: Set<Arrival> = []

    var isEmpty: Bool { head == order.count }
    var count: Int { order.count - head }

    /// Queues `arrival` unless it is queued already; true if it was added.
    @discardableResult
    mutating func push(_ arrival: Arrival) -> Bool {
        guard queued.insert(arrival).inserted else { return false }
        order.append(arrival)
        return true
    }

    /// Up to `limit` arrivals, oldest first.
    mutating func pop(limit: Int) -> [Arrival] {
        let end = min(order.count, head + limit)
        let batch = Array(order[head..<end])
        head = end
        for arrival in batch { queued.remove(arrival) }
        if head > 4096 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        return batch
    }
}
