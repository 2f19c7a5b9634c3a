import DocRoutePlatform

extension DeliveryError {
    /// `error` as a ``DeliveryError``: itself if it is one already, else code `ledger` with what
    /// was being done (a ledger implementation reports its own errors as ``DeliveryError``s with
    /// the right code before they get here; this names what the delivery step was doing).
    package static func wrapping(_ doing: String, _ error: any Error, file: String = #fileID, line: Int = #line) -> DeliveryError {
        if let error = error as? DeliveryError { return error }
        return DeliveryError(
            code: .ledger,
            message: "Could not \(doing): \(error). \(DeliveryError.advice(for: .ledger))",
            cause: error, file: file, line: line)
    }
}
