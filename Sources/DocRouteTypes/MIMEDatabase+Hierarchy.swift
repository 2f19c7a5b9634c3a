extension MIMEDatabase {
    static let plainText = "text/plain"
    static let octetStream = "application/octet-stream"
    static let desktopEntry = "application/x-desktop"

    /// The canonical form of `mime`: parameters such as `; charset=utf-8` and surrounding
    /// blanks removed, lowercased, and an alias replaced by the type it stands for.
    ///
    /// `canonical("Text/XML; charset=utf-8")` is `application/xml` with the freedesktop data.
    public func canonical(_ mime: String) -> String {
        let type = Self.normalized(mime)
        return aliasTargets[type] ?? type
    }

    /// The direct parents of `mime` (canonicalised first): its `sub-class-of` types from the
    /// database, then the spec's implicit ones, `text/plain` for every other `text/*` type and
    /// `application/octet-stream` for everything except `inode/*` and itself.
    public func parents(of mime: String) -> [String] {
        parents(ofCanonical: canonical(mime))
    }

    /// Every ancestor of `mime`, nearest first (breadth-first), without `mime` itself.
    /// `application/octet-stream`, when present, is always last.
    public func ancestors(of mime: String) -> [String] {
        let start = canonical(mime)
        var found: [String] = []
        var queue = [start]
        var next = 0
        while next < queue.count {
            for parent in parents(ofCanonical: queue[next]) where parent != start && !found.contains(parent) {
                found.append(parent)
                queue.append(parent)
            }
            next += 1
        }
        if let index = found.firstIndex(of: Self.octetStream), index != found.count - 1 {
            found.remove(at: index)
            found.append(Self.octetStream)
        }
        return found
    }

    /// Whether `mime` is `ancestor` or a subclass of it, directly or through other types,
    /// counting the implicit `text/plain` and `application/octet-stream` parents.
    /// `ancestor` may also be a whole media type written `image/*`.
    ///
    /// Equal types count as a match, which is what the spec's "equal to or a subclass of" needs.
    public func isSubclass(_ mime: String, of ancestor: String) -> Bool {
        isSubclass(canonicalType: canonical(mime), ofCanonical: canonical(ancestor))
    }

    func isSubclass(canonicalType mime: String, ofCanonical ancestor: String) -> Bool {
        if mime == ancestor { return true }
        if ancestor.hasSuffix("/*") {
            return mime.hasPrefix(ancestor.dropLast())
        }
        if ancestor == Self.octetStream { return !mime.hasPrefix("inode/") }
        if ancestor == Self.plainText, mime.hasPrefix("text/") { return true }
        var visited: [String] = [mime]
        var next = 0
        while next < visited.count {
            let current = visited[next]
            next += 1
            if ancestor == Self.plainText, current.hasPrefix("text/") { return true }
            for parent in explicitParents[current] ?? [] where !visited.contains(parent) {
                if parent == ancestor { return true }
                visited.append(parent)
            }
        }
        return false
    }

    func parents(ofCanonical type: String) -> [String] {
        var result = explicitParents[type] ?? []
        if type.hasPrefix("text/"), type != Self.plainText, !result.contains(Self.plainText) {
            result.append(Self.plainText)
        }
        if !type.hasPrefix("inode/"), type != Self.octetStream, !result.contains(Self.octetStream) {
            result.append(Self.octetStream)
        }
        return result
    }
}
