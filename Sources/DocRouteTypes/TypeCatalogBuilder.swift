/// Collects declarations, applies the precedence rules and builds an immutable ``TypeCatalog``.
///
/// Rules: the system's declaration of an identifier is authoritative (a handler that exports a
/// `public.*` or other system type is reported; one that imports it is normal and silent); an
/// exported declaration outranks an imported one; between two handlers exporting one identifier
/// the first added wins and the second is reported. A parent nobody declares becomes a bare type of
/// its own (reported), so the declaration naming it keeps it as an ancestor; edges that close a
/// conformance cycle are dropped and reported.
public struct TypeCatalogBuilder: Sendable {
    struct Pending: Sendable {
        var declaration: TypeDeclaration
        var file: String?
        var keyPath: String?
    }

    var pending: [Pending] = []
    var positionByIdentifier: [String: Int] = [:]
    /// Problems found so far; ``build()`` adds the graph's own.
    public private(set) var issues: [TypeCatalogIssue] = []

    /// An empty builder; add ``systemDeclarations`` first for the usual catalog.
    public init() {}

    /// A builder holding Apple's system declarations and the project's built-in additions.
    public static func withSystemTypes() -> TypeCatalogBuilder {
        var builder = TypeCatalogBuilder()
        for declaration in SystemTypes.declarations { builder.add(declaration, file: "system-utis.json") }
        return builder
    }

    /// Adds problems found by a caller (for example while reading a property list) to the report.
    public mutating func report(_ issue: TypeCatalogIssue) {
        issues.append(issue)
    }

    /// Adds one declaration; `file` and `keyPath` say where it came from, for reports.
    public mutating func add(_ declaration: TypeDeclaration, file: String? = nil, keyPath: String? = nil) {
        let identifier = declaration.identifier
        guard Self.isValidIdentifier(identifier) else {
            issues.append(TypeCatalogIssue(
                code: identifier.isEmpty ? .missingIdentifier : .invalidValue, inputFile: file,
                inputKey: keyPath.map { "\($0).UTTypeIdentifier" },
                message: identifier.isEmpty
                    ? "the declaration has no UTTypeIdentifier; add one (reverse-DNS, e.g. com.example.type)"
                    : "'\(identifier)' is not a valid type identifier (letters, digits, '-' and '.', not starting with 'dyn.')"))
            return
        }
        let key = identifier.lowercased()
        guard let position = positionByIdentifier[key] else {
            positionByIdentifier[key] = pending.count
            pending.append(Pending(declaration: declaration, file: file, keyPath: keyPath))
            return
        }
        let existing = pending[position]
        switch (existing.declaration.origin, declaration.origin) {
        case (.system, .exported(let bundle)):
            issues.append(TypeCatalogIssue(
                code: .systemTypeRedefined, inputFile: file, inputKey: keyPath,
                message: "\(bundle) exports '\(identifier)', a system type that handlers may not redefine; declare it under UTImportedTypeDeclarations or use an identifier of your own"))
        case (.exported(let first), .exported(let second)) where first != second:
            issues.append(TypeCatalogIssue(
                code: .overridden, inputFile: file, inputKey: keyPath,
                message: "'\(identifier)' is exported by both \(first) and \(second); \(first)'s declaration is used"))
        case (let old, let new) where new < old:
            pending[position] = Pending(declaration: declaration, file: file, keyPath: keyPath)
        default:
            // Importing a type someone else declares is the normal case: nothing to report.
            break
        }
    }

    /// Builds the catalog. Never fails: problems are in ``TypeCatalog/issues``.
    public func build() -> TypeCatalog {
        var issues = self.issues
        var survivors = pending
        // A parent nobody declares stays a name the type conforms to, as with Launch Services: it
        // gets an entry of its own (no tags, no parents), so a handler claiming it is found.
        let known = Set(survivors.map { $0.declaration.identifier.lowercased() })
        var named: [Pending] = []
        var namedKeys: Set<String> = []
        for position in survivors.indices {
            let item = survivors[position]
            if item.declaration.origin == .system {
                // Apple's own table names a few internal parents it does not list; keep the type.
                survivors[position].declaration.conformsTo.removeAll { !known.contains($0.lowercased()) }
                continue
            }
            for (offset, parent) in item.declaration.conformsTo.enumerated() where !known.contains(parent.lowercased()) {
                let keyPath = item.keyPath.map { "\($0).UTTypeConformsTo[\(offset)]" }
                guard Self.isValidIdentifier(parent) else {
                    // No entry for it: the edge is dropped below, as only catalog types have an index.
                    issues.append(TypeCatalogIssue(
                        code: .invalidValue, inputFile: item.file, inputKey: keyPath,
                        message: "'\(parent)' is not a valid type identifier; '\(item.declaration.identifier)' does not conform to it"))
                    continue
                }
                issues.append(TypeCatalogIssue(
                    code: .unknownParent, inputFile: item.file, inputKey: keyPath,
                    message: "'\(item.declaration.identifier)' conforms to '\(parent)', which no one declares; it stays a name the type conforms to, with no tags or parents of its own (declare or import '\(parent)' to give it some)"))
                if namedKeys.insert(parent.lowercased()).inserted {
                    // Imported by the handler that names it: it describes the type without owning it.
                    let origin = item.declaration.origin.bundleIdentifier.map { DeclarationOrigin.imported(bundleIdentifier: $0) } ?? .system
                    named.append(Pending(declaration: TypeDeclaration(identifier: parent, origin: origin), file: item.file, keyPath: keyPath))
                }
            }
        }
        survivors += named

        var indexByIdentifier: [String: Int] = [:]
        for (index, item) in survivors.enumerated() {
            indexByIdentifier[item.declaration.identifier.lowercased()] = index
        }
        var parents: [[Int]] = survivors.map { item in
            var seen: [Int] = []
            for parent in item.declaration.conformsTo {
                if let index = indexByIdentifier[parent.lowercased()], !seen.contains(index) { seen.append(index) }
            }
            return seen
        }
        Self.breakCycles(&parents, survivors: survivors, issues: &issues)

        let physical = PhysicalConformance(indexByIdentifier: indexByIdentifier)
        var entries: [TypeCatalog.Entry] = []
        entries.reserveCapacity(survivors.count)
        for (index, item) in survivors.enumerated() {
            let ancestors = physical.completing(Self.ancestors(of: index, parents: parents), of: index)
            entries.append(TypeCatalog.Entry(
                declaration: item.declaration, parents: parents[index],
                ancestors: ancestors, ancestorSet: Set(ancestors),
                ancestorIdentifiers: ancestors.map { survivors[$0].declaration.identifier }))
        }

        // Tag preference: system before exported before imported, then catalog order.
        let order = entries.indices.sorted {
            let lhs = entries[$0].declaration.origin, rhs = entries[$1].declaration.origin
            return lhs.precedence != rhs.precedence ? lhs.precedence < rhs.precedence : $0 < $1
        }
        var indexByExtension: [String: [Int]] = [:]
        var indexByMIMEType: [String: [Int]] = [:]
        for index in order {
            let declaration = entries[index].declaration
            for tag in declaration.filenameExtensions {
                let key = tag.lowercased()
                if indexByExtension[key]?.contains(index) != true { indexByExtension[key, default: []].append(index) }
            }
            for tag in declaration.mimeTypes {
                let key = TypeCatalog.normalizedMIMEType(tag)
                if indexByMIMEType[key]?.contains(index) != true { indexByMIMEType[key, default: []].append(index) }
            }
        }
        return TypeCatalog(
            entries: entries, indexByIdentifier: indexByIdentifier,
            indexByExtension: indexByExtension, indexByMIMEType: indexByMIMEType, issues: issues)
    }

    /// Depth-first search; an edge into a node still on the stack closes a cycle and is dropped.
    static func breakCycles(_ parents: inout [[Int]], survivors: [Pending], issues: inout [TypeCatalogIssue]) {
        enum Mark { case unvisited, onStack, done }
        var marks = Array(repeating: Mark.unvisited, count: parents.count)
        for root in parents.indices where marks[root] == .unvisited {
            // Iterative, so a long chain in a hostile manifest cannot overflow the stack.
            var stack: [(node: Int, next: Int)] = [(root, 0)]
            marks[root] = .onStack
            while let top = stack.last {
                let node = top.node
                if top.next < parents[node].count {
                    stack[stack.count - 1].next += 1
                    let parent = parents[node][top.next]
                    switch marks[parent] {
                    case .unvisited:
                        marks[parent] = .onStack
                        stack.append((parent, 0))
                    case .onStack:
                        let child = survivors[node]
                        issues.append(TypeCatalogIssue(
                            code: .conformanceCycle, inputFile: child.file,
                            inputKey: child.keyPath.map { "\($0).UTTypeConformsTo" },
                            message: "'\(child.declaration.identifier)' conforming to '\(survivors[parent].declaration.identifier)' closes a conformance cycle; that edge is ignored"))
                        parents[node].remove(at: top.next)
                        stack[stack.count - 1].next -= 1
                    case .done:
                        break
                    }
                } else {
                    marks[node] = .done
                    stack.removeLast()
                }
            }
        }
    }

    static func ancestors(of index: Int, parents: [[Int]]) -> [Int] {
        var result: [Int] = []
        var seen: Set<Int> = [index]
        var queue = parents[index]
        var head = 0
        while head < queue.count {
            let next = queue[head]
            head += 1
            guard seen.insert(next).inserted else { continue }
            result.append(next)
            queue.append(contentsOf: parents[next])
        }
        return result
    }

    /// Reverse-DNS-like: ASCII letters, digits, `-`, `.`, `_`; no empty components; `dyn.` is reserved.
    static func isValidIdentifier(_ identifier: String) -> Bool {
        guard !identifier.isEmpty, !identifier.lowercased().hasPrefix("dyn.") else { return false }
        let utf8 = identifier.utf8
        guard utf8.first != UInt8(ascii: "."), utf8.last != UInt8(ascii: ".") else { return false }
        var previousDot = false
        for byte in utf8 {
            let isDot = byte == UInt8(ascii: ".")
            if isDot && previousDot { return false }
            previousDot = isDot
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                continue
            default:
                return false
            }
        }
        return true
    }
}

/// Apple's physical conformance: whatever a type's declared parents, a file of it is a regular file
/// (`public.data`, `public.item`) and a folder of it a directory (`public.directory`, `public.item`).
/// Appended after the declared ancestors, so the most specific types still come first, and so that
/// a handler claiming `public.data` is offered every file (an `.eml` whose declaration reaches only
/// `public.message`, a handler's type that names only `public.content`).
struct PhysicalConformance {
    let item: Int?
    let data: Int?
    let directory: Int?

    init(indexByIdentifier: [String: Int]) {
        item = indexByIdentifier["public.item"]
        data = indexByIdentifier["public.data"]
        directory = indexByIdentifier["public.directory"]
    }

    func completing(_ ancestors: [Int], of index: Int) -> [Int] {
        guard index != item else { return ancestors }
        let isDirectory = index == directory || (directory.map { ancestors.contains($0) } ?? false)
        var result = ancestors
        for physical in isDirectory ? [directory, item] : [data, item] {
            if let physical, physical != index, !result.contains(physical) { result.append(physical) }
        }
        return result
    }
}
