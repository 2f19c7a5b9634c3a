import DocRouteConfiguration
import DocRouteHandlers
import DocRouteTypes
import Testing

/// The codes the configuration, manifests and type declarations share are declared once
/// (`InputErrorCode`); their text is a contract that tools and tests match on.
@Suite struct InputErrorCodeTests {
    @Test func sharedCodesKeepTheirTextInEveryDomain() {
        #expect([ConfigurationErrorCode.unreadable, .wrongType, .missingKey, .invalidValue].map(\.rawValue)
            == ["unreadable", "wrong-type", "missing-key", "invalid-value"])
        #expect([ManifestErrorCode.unreadable, .wrongType, .missingKey, .invalidValue].map(\.rawValue)
            == ["unreadable", "wrong-type", "missing-key", "invalid-value"])
        #expect(TypeCatalogIssueCode.invalidValue.rawValue == "invalid-value")
    }

    @Test func eachDomainsOwnCodesKeepTheirText() {
        #expect([ConfigurationErrorCode.syntax, .unknownKey].map(\.rawValue) == ["syntax", "unknown-key"])
        #expect([ManifestErrorCode.notPropertyList, .duplicateIdentifier, .buildVariable, .unknownUser].map(\.rawValue)
            == ["not-property-list", "duplicate-identifier", "build-variable", "unknown-user"])
        #expect([TypeCatalogIssueCode.missingIdentifier, .unknownParent, .conformanceCycle, .systemTypeRedefined, .overridden]
            .map(\.rawValue) == ["missing-identifier", "unknown-parent", "conformance-cycle", "system-type-redefined", "overridden"])
    }

    @Test func aSharedCodeMatchesInASwitch() {
        switch ConfigurationErrorCode(rawValue: "missing-key") {
        case .missingKey: break
        default: Issue.record("missing-key does not match .missingKey")
        }
    }
}
