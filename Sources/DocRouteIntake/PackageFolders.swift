import DocRouteHandlers
import DocRouteTypes

/// Which folders in an inbox are package documents, delivered whole, rather than mailboxes (or
/// folders inside one) whose files are delivered one by one: intake's rule, which
/// `docroutectl route` shows too.
package enum PackageFolders {
    /// Whether a folder of this name is a package document: its name gives a type that conforms to
    /// `com.apple.package` (system-declared, e.g. `com.apple.rtfd`) or that a handler declares with
    /// `LSTypeIsPackage`. A name without a dot has no extension to tell, so it is a mailbox.
    package static func isPackage(named name: String, engine: TypeEngine, registry: HandlerRegistry) -> Bool {
        guard name.contains(".") else { return false }
        let classification = engine.classify(filename: name)
        return classification.contentType == "com.apple.package"
            || classification.conformsTo.contains("com.apple.package")
            || registry.isPackageType(classification.contentType)
    }
}
