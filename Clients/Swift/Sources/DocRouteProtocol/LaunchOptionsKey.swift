/// The keys of `launchOptions` in a `launch` message, named as UIKit names them.
public enum LaunchOptionsKey {
    /// The document's URL.
    public static let url = "UIApplicationLaunchOptionsURLKey"
    /// The bundle identifier of the application the document came from.
    public static let sourceApplication = "UIApplicationLaunchOptionsSourceApplicationKey"
    /// The document's annotation.
    public static let annotation = "UIApplicationLaunchOptionsAnnotationKey"
}
