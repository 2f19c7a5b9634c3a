import Foundation
import Logging

extension IntakePipeline {
    /// Whether a folder in an inbox is a package document rather than a mailbox: its name gives a
    /// type that conforms to `com.apple.package` (system-declared, e.g. `com.apple.rtfd`) or that a
    /// handler declares with `LSTypeIsPackage`. Any other folder is a mailbox.
    func isPackageFolder(_ name: [UInt8]) -> Bool {
        guard let snapshot = routing?(), name.contains(UInt8(ascii: ".")) else { return false }
        let classification = snapshot.engine.classify(filename: InboxNames.display(name))
        return classification.contentType == "com.apple.package"
            || classification.conformsTo.contains("com.apple.package")
            || snapshot.registry.isPackageType(classification.contentType)
    }

    /// A package folder is kept whole: it is never opened as a mailbox, so its inner files are not
    /// delivered one by one. Delivering packages whole is not implemented yet; it stays where it is.
    func packageFolderLeft(_ folder: WatchedFolder, name: [UInt8]) {
        logger.warning("package document left in the inbox: delivering folders whole is not supported yet, and it is not a mailbox", metadata: [
            "message-id": "package-left", "path": "\(folder.path)/\(InboxNames.display(name))",
        ])
    }
}
