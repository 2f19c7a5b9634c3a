import DocRouteTypes
import Foundation

extension ManifestReader.Reader {
    /// `DocRouteInboxRetentionDays`: a positive number of days (a real or an integer, so a
    /// fraction of a day can be asked for). A value that cannot be used is a warning and keeps
    /// every copy: the safe reading of a key that makes docrouted remove files.
    mutating func inboxRetentionDays(_ plist: [String: Any]) -> Double? {
        let key = "DocRouteInboxRetentionDays"
        guard let value = plist[key] else { return nil }
        // Foundation on Linux gives <true/> and <false/> as Bool and numbers as NSNumber, which
        // `is Bool` also matches for 0 and 1: the type itself tells them apart.
        let days: Double? = type(of: value) == Bool.self ? nil
            : (value as? NSNumber)?.doubleValue ?? (value as? Int).map(Double.init) ?? (value as? Double)
        guard let days else {
            warn(.wrongType, key, "expected a number of days (a real or an integer), found \(PropertyListTypeName.of(value)); acknowledged copies are kept")
            return nil
        }
        guard days.isFinite, days > 0, days <= Self.longestRetentionDays else {
            warn(.invalidValue, key, "\(days) is not a number of days above 0 and at most \(Int(Self.longestRetentionDays)); acknowledged copies are kept")
            return nil
        }
        return days
    }

    /// A hundred years: longer is the same as keeping every copy.
    static let longestRetentionDays = 36_525.0
}
