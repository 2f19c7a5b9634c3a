/// Files waiting for intake, each once however many times an event or a scan reports it.
struct ArrivalQueue {
    struct Arrival: Hashable {
        var folder: WatchedFolder
        var name: [UInt8]
    }

    private(set) var order: [Arrival] = []
    private var head = 0
    private var queued: Set<Arrival> = []

    var isEmpty: Bool { head == order.count }
    var count: Int { order.count - head }

    mutating func push(_ arrival: Arrival) {
        guard queued.insert(arrival).inserted else { return }
        order.append(arrival)
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
