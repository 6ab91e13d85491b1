extension Duration {
    /// The duration as fractional seconds, for rates and summaries.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
