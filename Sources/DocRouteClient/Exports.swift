// Handler authors need the message types (DocumentEvent, PropertyListValue, ErrorCode) with
// the client; re-exporting saves them a second import.
@_exported import DocRouteProtocol
