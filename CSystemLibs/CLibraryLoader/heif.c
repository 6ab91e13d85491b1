/* libheif, loaded on first use (see loader.h): it links libde265, x265, dav1d and aom, which a command that reads no
 * HEIF never needs. libheif 1.x keeps its soname at .so.1. */
#include "loader.h"

#include <libheif/heif.h>

static struct lazy_library heif = {"libheif.so.1", NULL};

typedef struct heif_context context;
typedef struct heif_image_handle handle;
typedef struct heif_image image;
typedef struct heif_error error;
typedef struct heif_color_profile_nclx nclx;

FORWARD(heif, error, heif_init, (struct heif_init_params *params), (params))
FORWARD(heif, const char *, heif_get_version, (void), ())

FORWARD(heif, context *, heif_context_alloc, (void), ())
FORWARD_VOID(heif, heif_context_free, (context *ctx), (ctx))
FORWARD(heif, error, heif_context_read_from_file,
        (context *ctx, const char *filename, const struct heif_reading_options *options), (ctx, filename, options))
FORWARD(heif, error, heif_context_read_from_memory_without_copy,
        (context *ctx, const void *mem, size_t size, const struct heif_reading_options *options),
        (ctx, mem, size, options))
FORWARD_VOID(heif, heif_context_set_max_decoding_threads, (context *ctx, int max_threads), (ctx, max_threads))
FORWARD(heif, error, heif_context_get_primary_image_ID, (context *ctx, heif_item_id *id), (ctx, id))
FORWARD(heif, int, heif_context_get_list_of_top_level_image_IDs, (context *ctx, heif_item_id *ids, int count),
        (ctx, ids, count))
FORWARD(heif, int, heif_context_is_top_level_image_ID, (context *ctx, heif_item_id id), (ctx, id))
FORWARD(heif, error, heif_context_get_image_handle, (context *ctx, heif_item_id id, handle **out), (ctx, id, out))

FORWARD(heif, int, heif_image_handle_get_width, (const handle *h), (h))
FORWARD(heif, int, heif_image_handle_get_height, (const handle *h), (h))
FORWARD(heif, int, heif_image_handle_has_alpha_channel, (const handle *h), (h))
FORWARD(heif, int, heif_image_handle_get_luma_bits_per_pixel, (const handle *h), (h))
FORWARD(heif, int, heif_image_handle_get_number_of_thumbnails, (const handle *h), (h))
FORWARD(heif, int, heif_image_handle_get_list_of_thumbnail_IDs, (const handle *h, heif_item_id *ids, int count),
        (h, ids, count))
FORWARD(heif, error, heif_image_handle_get_thumbnail, (const handle *h, heif_item_id id, handle **out), (h, id, out))
FORWARD(heif, int, heif_image_handle_get_number_of_metadata_blocks, (const handle *h, const char *type_filter),
        (h, type_filter))
FORWARD(heif, int, heif_image_handle_get_list_of_metadata_block_IDs,
        (const handle *h, const char *type_filter, heif_item_id *ids, int count), (h, type_filter, ids, count))
FORWARD(heif, size_t, heif_image_handle_get_metadata_size, (const handle *h, heif_item_id id), (h, id))
FORWARD(heif, error, heif_image_handle_get_metadata, (const handle *h, heif_item_id id, void *out), (h, id, out))
FORWARD(heif, enum heif_color_profile_type, heif_image_handle_get_color_profile_type, (const handle *h), (h))
FORWARD(heif, size_t, heif_image_handle_get_raw_color_profile_size, (const handle *h), (h))
FORWARD(heif, error, heif_image_handle_get_raw_color_profile, (const handle *h, void *out), (h, out))
FORWARD(heif, error, heif_image_handle_get_nclx_color_profile, (const handle *h, nclx **out), (h, out))
FORWARD_VOID(heif, heif_image_handle_release, (const handle *h), (h))

FORWARD(heif, struct heif_decoding_options *, heif_decoding_options_alloc, (void), ())
FORWARD_VOID(heif, heif_decoding_options_free, (struct heif_decoding_options *options), (options))
FORWARD(heif, error, heif_decode_image,
        (const handle *h, image **out, enum heif_colorspace colorspace, enum heif_chroma chroma,
         const struct heif_decoding_options *options),
        (h, out, colorspace, chroma, options))
FORWARD(heif, int, heif_image_get_primary_width, (const image *img), (img))
FORWARD(heif, int, heif_image_get_primary_height, (const image *img), (img))
FORWARD(heif, const uint8_t *, heif_image_get_plane_readonly,
        (const image *img, enum heif_channel channel, int *out_stride), (img, channel, out_stride))
FORWARD(heif, error, heif_image_get_nclx_color_profile, (const image *img, nclx **out), (img, out))
FORWARD_VOID(heif, heif_image_release, (const image *img), (img))
FORWARD_VOID(heif, heif_nclx_color_profile_free, (nclx *profile), (profile))
