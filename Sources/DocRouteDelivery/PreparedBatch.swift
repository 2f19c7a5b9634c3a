import DocRoutePlatform

/// A delivery batch between its two halves: copies durable under temporary names, the mailbox
/// folders they are in still open. Made by ``DeliveryBatch/prepare(_:)``, consumed once by
/// ``DeliveryBatch/complete(_:committed:)`` or ``DeliveryBatch/abandon(_:)``, which close the
/// folders (so it must reach exactly one of them); it moves from the copying thread to the
/// committing one, never shared.
package struct PreparedBatch: Sendable {
    var items: [DeliveryBatch.Item]
    var folders: [DeliveryBatch.FolderKey: Result<SandboxWriter.Folder, DeliveryError>] = [:]
    /// Mailbox folders found moved away during the copy, still open for the copies made in them.
    var retiredFolders: [SandboxWriter.Folder] = []
    var timings = BatchStepTimings()
    let started = ContinuousClock.now

    init(items: [DeliveryBatch.Item]) {
        self.items = items
    }

    /// How many requests it carries.
    package var count: Int { items.count }

    mutating func closeFolders() {
        for case .success(let folder) in folders.values { folder.close() }
        folders.removeAll()
        for folder in retiredFolders { folder.close() }
        retiredFolders.removeAll()
    }
}
