extension ManifestReader.Reader {
    /// The keys of one level of a manifest: those docroute reads, and Apple's other documented keys
    /// of that level, which are never taken for misspellings even when they are a letter away
    /// from a read one (`CFBundleTypeIconFile` beside `CFBundleTypeIconFiles`).
    struct KeySet {
        var read: [String]
        var alsoKnown: [String]

        static let topLevel = KeySet(
            read: ["CFBundleIdentifier", "CFBundleName", "CFBundleDocumentTypes", "CFBundleURLTypes",
                   "UTExportedTypeDeclarations", "UTImportedTypeDeclarations",
                   "DocRouteUser", "DocRouteLaunchCommand", "DocRouteContainer", "DocRouteInboxRetentionDays"],
            alsoKnown: ["CFBundleDisplayName", "CFBundleExecutable", "CFBundleIconFile", "CFBundleIconFiles", "CFBundleIconName",
                        "CFBundleIcons", "CFBundleVersion", "CFBundleShortVersionString", "CFBundlePackageType",
                        "CFBundleSignature", "CFBundleDevelopmentRegion", "CFBundleInfoDictionaryVersion",
                        "CFBundleSpokenName", "CFBundleLocalizations", "CFBundleGetInfoString", "CFBundleHelpBookName",
                        "CFBundleHelpBookFolder", "CFBundleSupportedPlatforms", "CFBundleAllowMixedLocalizations",
                        "NSExportableTypes", "NSServices", "UTTypeDeclarations"])
        static let documentType = KeySet(
            read: ["CFBundleTypeName", "CFBundleTypeRole", "LSHandlerRank", "LSItemContentTypes", "CFBundleTypeIconFiles",
                   "LSTypeIsPackage", "CFBundleTypeExtensions", "CFBundleTypeMIMETypes"],
            alsoKnown: ["CFBundleTypeIconFile", "CFBundleTypeIconSystemGenerated", "CFBundleTypeOSTypes", "NSDocumentClass",
                        "NSExportableTypes", "NSExportableAs", "NSPersistentStoreTypeKey", "NSIsRelatedItemType",
                        "NSUbiquitousDocumentUserActivityType", "LSIsAppleDefaultForType", "LSDefaultShareModeCollaboration"])
        static let urlType = KeySet(
            read: ["CFBundleURLName", "CFBundleURLSchemes"],
            alsoKnown: ["CFBundleURLIconFile", "CFBundleTypeRole", "LSHandlerRank", "CFBundleURLIconName"])
        static let typeDeclaration = KeySet(
            read: ["UTTypeIdentifier", "UTTypeConformsTo", "UTTypeTagSpecification", "UTTypeDescription"],
            alsoKnown: ["UTTypeIconFile", "UTTypeIconFiles", "UTTypeIconName", "UTTypeIcons", "UTTypeReferenceURL", "UTTypeVersion",
                        "UTTypeIsDeclaredInMobileCoreServices", "UTTypeIconBadgeName", "UTTypeIconText", "UTTypeIconBackgroundName"])
        static let tagSpecification = KeySet(
            read: ["public.filename-extension", "public.mime-type"],
            alsoKnown: ["com.apple.ostype", "com.apple.nspboard-type", "public.url-scheme", "com.apple.macos.filename-extension"])
    }

    /// How far apart two keys may be, in edits, for one to be taken for a misspelling of the other.
    /// Two catches a dropped plural and a swapped pair of letters; a real key of Apple's is
    /// further from every key docroute reads than that, or it is listed in ``KeySet/alsoKnown``.
    static let misspellingDistance = 2

    /// Warns about each key of `dictionary` that docroute does not read but that is within
    /// ``misspellingDistance`` of one it does (compared without case: keys are case-sensitive,
    /// so `cfBundleDocumentTypes` is not read either), naming the key path and the likely key.
    mutating func warnAboutMisspelledKeys(_ dictionary: [String: Any], _ keys: KeySet, at path: String) {
        for key in dictionary.keys.sorted() where !keys.read.contains(key) && !keys.alsoKnown.contains(key) {
            let lowered = key.lowercased()
            var nearest: (key: String, distance: Int)?
            for candidate in keys.read {
                let distance = Self.editDistance(lowered, candidate.lowercased(), limit: Self.misspellingDistance)
                if distance <= Self.misspellingDistance, nearest == nil || distance < nearest!.distance {
                    nearest = (candidate, distance)
                }
            }
            guard let nearest else { continue }
            warn(.misspelledKey, path + key,
                 "'\(key)' is not a key docroute reads; did you mean '\(nearest.key)'? What it holds is not used until the key is spelled '\(nearest.key)'")
        }
    }

    /// The Levenshtein distance of `a` and `b`, or `limit + 1` as soon as it must exceed `limit`.
    static func editDistance(_ a: String, _ b: String, limit: Int) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard abs(a.count - b.count) <= limit else { return limit + 1 }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                rowMinimum = min(rowMinimum, current[j])
            }
            guard rowMinimum <= limit else { return limit + 1 }
            swap(&previous, &current)
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
