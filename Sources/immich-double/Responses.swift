import Foundation
import ImmichAPI

/// The wire shapes Immich answers with, built from the double's records; every field the spec requires is filled
/// (nullable ones that are nil come back as null through NullFill).
enum Wire {
    static func user(_ user: User, at date: Date) -> Components.Schemas.UserResponseDto {
        .init(avatarColor: .primary, email: user.email, id: user.id, name: user.name, profileChangedAt: date,
              profileImagePath: "")
    }

    static func tag(_ tag: Tag) -> Components.Schemas.TagResponseDto {
        .init(createdAt: tag.createdAt, id: tag.id, name: tag.name, parentId: tag.parentId, updatedAt: tag.updatedAt,
              value: tag.value)
    }

    /// `owner`, `tags` and `stack` nil leave those fields out (or null, for `stack`, through NullFill).
    static func asset(_ asset: Asset, owner: User?, tags: [Tag]?, stack: Components.Schemas.AssetStackResponseDto?,
                      startedAt: Date) -> Components.Schemas.AssetResponseDto {
        let exif = Components.Schemas.ExifResponseDto(
            dateTimeOriginal: asset.dateTimeOriginal ?? asset.fileCreatedAt, description: asset.description ?? "",
            fileSizeInByte: asset.bytes, latitude: asset.latitude, longitude: asset.longitude)
        return .init(
            checksum: asset.checksumBase64,
            createdAt: asset.createdAt,
            duration: asset.duration,
            exifInfo: exif,
            fileCreatedAt: asset.fileCreatedAt,
            fileModifiedAt: asset.fileModifiedAt,
            hasMetadata: true,
            id: asset.id,
            isArchived: asset.visibility == .archive,
            isEdited: false,
            isFavorite: asset.isFavorite,
            isOffline: false,
            isTrashed: asset.isTrashed,
            livePhotoVideoId: asset.livePhotoVideoId,
            // Immich stores the capture time as local wall-clock time; the double keeps no zone, so UTC stands in.
            localDateTime: asset.dateTimeOriginal ?? asset.fileCreatedAt,
            originalFileName: asset.originalFileName,
            originalMimeType: Asset.mimeType(forFileName: asset.originalFileName),
            originalPath: asset.path,
            owner: owner.map { user($0, at: startedAt) },
            ownerId: asset.ownerId,
            people: [],
            resized: false,
            stack: stack.map { .init(value1: $0) },
            tags: tags?.map(tag),
            _type: asset.type,
            updatedAt: asset.updatedAt,
            visibility: asset.visibility)
    }

    static func album(_ album: Album, owner: User?, members: [(User, Components.Schemas.AlbumUserRole)], assets: [Asset],
                      startedAt: Date) -> Components.Schemas.AlbumResponseDto {
        let dates = assets.map(\.fileCreatedAt)
        let ownerEntry = owner.map { Components.Schemas.AlbumUserResponseDto(role: .owner, user: user($0, at: startedAt)) }
        let others = members.map { Components.Schemas.AlbumUserResponseDto(role: $0.1, user: user($0.0, at: startedAt)) }
        return .init(
            albumName: album.name,
            albumThumbnailAssetId: album.assetIds.first,
            albumUsers: (ownerEntry.map { [$0] } ?? []) + others,
            assetCount: album.assetIds.count,
            createdAt: album.createdAt,
            description: album.description,
            endDate: dates.max(),
            hasSharedLink: false,
            id: album.id,
            isActivityEnabled: true,
            lastModifiedAssetTimestamp: assets.map(\.updatedAt).max(),
            order: .desc,
            shared: !members.isEmpty,
            startDate: dates.min(),
            updatedAt: album.updatedAt)
    }

    static func userAdmin(_ user: User, usage: Int, startedAt: Date) -> Components.Schemas.UserAdminResponseDto {
        .init(avatarColor: .primary, createdAt: startedAt, email: user.email, id: user.id, isAdmin: false,
              name: user.name, oauthId: "", profileChangedAt: startedAt, profileImagePath: "",
              quotaUsageInBytes: usage, shouldChangePassword: false, status: .active, updatedAt: startedAt)
    }
}
