/// The API key permissions a run asks of Immich, by what it does, in Immich's names (each operation's
/// `x-immich-permission`). A key created with some permissions only is checked against them at connect, so a
/// missing one is named before anything is sent instead of failing the run half-way.
package enum ImmichPermissions {
    /// Every import and sync: who the key is, what the server holds, the uploads, Live Photo links and dates.
    package static let bringIn: Set<String> = ["user.read", "asset.upload", "asset.update"]
    /// A sync that applies deletions: each trashed asset is tagged with its run first.
    package static let trash: Set<String> = ["tag.create", "tag.asset", "asset.delete"]
    /// Every sync: the check of what cairn uploaded (a search of Immich's trash; the full check rides `asset.upload`).
    package static let driftCheck: Set<String> = ["asset.read"]
    /// Bringing content back from Immich's trash (`--destination-drift restore`, an import's trashed content): `asset.delete`'s.
    package static let restoreFromTrash: Set<String> = ["asset.delete"]
    /// `--tag`, `--session-tag`; and the people a Google Takeout JSON names, as tags (not asked at connect for
    /// those: a key without them is said not to have sent them).
    package static let tags: Set<String> = ["tag.create", "tag.asset"]
    /// Stacks (on unless `--stacks off`): `POST /stacks` needs `stack.create`; its members must be the key user's own
    /// assets (the server checks `asset.update` access on each by owner, not the key's permission: `stack.service.ts`,
    /// `utils/access.ts`). Not asked at connect: a key without it is said not to have made them.
    package static let stacks: Set<String> = ["stack.create"]
    /// `--album`, `--album-from`.
    package static let albums: Set<String> = ["album.read", "album.create", "albumAsset.create"]
    /// `cairn restore`: the run's tag and its assets, what the server still holds, the restore.
    package static let restore: Set<String> = ["user.read", "tag.create", "asset.read", "asset.upload", "asset.delete"]
}
