extension MIMEDatabase {
    /// This database with glob rules and `sub-class-of` pairs of highest precedence added (the
    /// types that handlers declare). The magic table, aliases, ``source`` and ``directories`` are
    /// this database's own and shared, not copied: only the glob index is built again.
    func adding(globs rules: [MIMEDatabaseLayer.GlobRule], subclasses: [MIMEDatabaseLayer.TypePair]) -> MIMEDatabase {
        // The added rules form layer 0; every existing rule moves one layer down.
        var entries = globs.entries.map { entry in
            var shifted = entry
            shifted.layer += 1
            return shifted
        }
        for rule in rules {
            entries.append(MIMEGlobTable.Entry(
                type: canonical(rule.type), weight: rule.weight, pattern: rule.pattern,
                caseSensitive: rule.caseSensitive, layer: 0, order: entries.count))
        }
        var parents = explicitParents
        for pair in subclasses {
            let child = canonical(pair.first)
            let parent = canonical(pair.second)
            guard child != parent, parents[child]?.contains(parent) != true else { continue }
            parents[child, default: []].append(parent)
        }
        return MIMEDatabase(
            source: source, directories: directories, issues: issues, globs: MIMEGlobTable(entries: entries),
            magic: magic, explicitParents: parents, aliasTargets: aliasTargets, aliasesByTarget: aliasesByTarget)
    }
}
