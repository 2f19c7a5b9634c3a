import Logging

extension LogHandler {
    /// An event's metadata as docrouted's handlers write it: the handler's own, then its
    /// provider's, then the call site's (`explicit`), later ones winning.
    func mergedMetadata(_ explicit: Logger.Metadata?) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit { merged.merge(explicit) { _, new in new } }
        return merged
    }
}
