// Handler authors need the message types (DocumentEvent, PropertyListValue, ErrorCode) and the
// error shape (DocRouteError, SourceLocation) with the client; re-exporting saves them more imports.
@_exported import DocRouteErrors
@_exported import DocRouteProtocol
