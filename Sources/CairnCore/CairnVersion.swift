/// cairn's version, as `cairn --version` and `cairn_build_info` say it.
public enum CairnVersion {
    public static let current = "0.10.0"
}
