#ifndef CLIBRAW_SHIM_H
#define CLIBRAW_SHIM_H
#include <libraw/libraw.h>

/* libraw_data_t is a large nested struct; these prefixed accessors keep the Swift side to plain values. */

/* The processed image's size as dcraw_process would make it, after the camera's flip, full size. */
static inline int CLibRaw_displayed_size(libraw_data_t *lr, int *width, int *height) {
    int rc = libraw_adjust_sizes_info_only(lr);
    *width = lr->sizes.iwidth;
    *height = lr->sizes.iheight;
    return rc;
}
/* The camera's flip before any size adjustment: 0 none, 3 180 degrees, 5 90 counterclockwise, 6 90 clockwise. */
static inline int CLibRaw_flip(const libraw_data_t *lr) { return lr->sizes.flip; }
static inline int CLibRaw_sensor_width(const libraw_data_t *lr) { return lr->sizes.width; }
static inline int CLibRaw_sensor_height(const libraw_data_t *lr) { return lr->sizes.height; }
static inline const char *CLibRaw_make(const libraw_data_t *lr) { return lr->idata.make; }
static inline const char *CLibRaw_model(const libraw_data_t *lr) { return lr->idata.model; }
static inline const char *CLibRaw_lens(const libraw_data_t *lr) { return lr->lens.Lens; }
/* Capture time as the camera wrote it, read by LibRaw as local time into a time_t. */
static inline long long CLibRaw_timestamp(const libraw_data_t *lr) { return (long long)lr->other.timestamp; }
static inline double CLibRaw_latitude(const libraw_data_t *lr, int *valid) {
    *valid = lr->other.parsed_gps.gpsparsed;
    const float *l = lr->other.parsed_gps.latitude;
    double v = l[0] + l[1] / 60.0 + l[2] / 3600.0;
    return lr->other.parsed_gps.latref == 'S' ? -v : v;
}
static inline double CLibRaw_longitude(const libraw_data_t *lr) {
    const float *l = lr->other.parsed_gps.longitude;
    double v = l[0] + l[1] / 60.0 + l[2] / 3600.0;
    return lr->other.parsed_gps.longref == 'W' ? -v : v;
}
static inline int CLibRaw_thumbnail_format(const libraw_data_t *lr) { return (int)lr->thumbnail.tformat; }
static inline int CLibRaw_thumbnail_width(const libraw_data_t *lr) { return lr->thumbnail.twidth; }
static inline int CLibRaw_thumbnail_height(const libraw_data_t *lr) { return lr->thumbnail.theight; }
static inline unsigned CLibRaw_thumbnail_length(const libraw_data_t *lr) { return lr->thumbnail.tlength; }
static inline int CLibRaw_is_raw(const libraw_data_t *lr) { return lr->idata.is_foveon || lr->idata.filters || lr->idata.colors; }

/* LibRaw prints data errors to stderr by default; cairn reports its own reasons. */
static void CLibRaw_ignore_data_error(void *data, const char *file, const INT64 offset) {
    (void)data; (void)file; (void)offset;
}
static inline void CLibRaw_silence(libraw_data_t *lr) { libraw_set_dataerror_handler(lr, CLibRaw_ignore_data_error, NULL); }

/* A quick, small sRGB 8-bit rendering: half-size demosaic, camera white balance. */
static inline void CLibRaw_configure_preview(libraw_data_t *lr) {
    lr->params.half_size = 1;
    lr->params.use_camera_wb = 1;
    lr->params.output_bps = 8;
    lr->params.output_color = 1; /* sRGB */
    lr->params.user_qual = 0;    /* linear interpolation: the fastest */
}

static inline int CLibRaw_processed_type(const libraw_processed_image_t *image) { return (int)image->type; }
static inline int CLibRaw_processed_width(const libraw_processed_image_t *image) { return image->width; }
static inline int CLibRaw_processed_height(const libraw_processed_image_t *image) { return image->height; }
static inline int CLibRaw_processed_colors(const libraw_processed_image_t *image) { return image->colors; }
static inline int CLibRaw_processed_bits(const libraw_processed_image_t *image) { return image->bits; }
static inline unsigned CLibRaw_processed_size(const libraw_processed_image_t *image) { return image->data_size; }
static inline const unsigned char *CLibRaw_processed_data(const libraw_processed_image_t *image) { return image->data; }
#endif
