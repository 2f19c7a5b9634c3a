import DocRouteProtocol

extension PendingEvent {
    /// The event a handler is sent for this delivery; nil when the row cannot make one (a file
    /// with no path, a URL with none).
    package var documentEvent: DocumentEvent? {
        var annotation: [String: PropertyListValue] = [:]
        // Read for every document sent; JSONDecoder took 4% of the daemon's time in a burst here.
        if let text = self.annotation, let json = JSONValue(parsingJSON: text),
           case .dictionary(let object)? = PropertyListValue(json) {
            annotation = object
        }
        let id = deliveryID.lowercased()
        switch kind {
        case .url:
            guard let url else { return nil }
            return DocumentEvent(deliveryID: id, urlString: url, isFileURL: false, sourceApplication: sourceApplication, annotation: annotation)
        case .file:
            guard let finalPath, let url = try? FileURL.string(forAbsolutePath: Array(finalPath.utf8)) else { return nil }
            return DocumentEvent(deliveryID: id, urlString: url, isFileURL: true, contentType: contentType,
                                 mailbox: mailbox, sourceApplication: sourceApplication, annotation: annotation)
        }
    }
}
