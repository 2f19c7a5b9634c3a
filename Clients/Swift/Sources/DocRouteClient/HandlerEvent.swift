/// Something the daemon tells a subscribed handler.
public enum HandlerEvent: Sendable {
    /// `application:didFinishLaunchingWithOptions:`: sent once per subscription, first.
    case launch(LaunchOptions)
    /// `application:openURL:sourceApplication:annotation:`: every other document or URL.
    case openURL(DocumentEvent)
    /// An `error` that answers no pending request, such as a failed acknowledgement
    /// (`not-found`; its `requestID` is `ack:` followed by the delivery ID).
    case daemonError(DocRouteClientError)
}
