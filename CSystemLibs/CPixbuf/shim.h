#ifndef CPIXBUF_SHIM_H
#define CPIXBUF_SHIM_H
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <string.h>

/* GdkPixbuf, GError and g_object_unref are glib macros and casts Swift cannot call; these take plain types. */

/* Size and format name from the file's header, without decoding: 0 when gdk-pixbuf knows no such format. */
static inline int CPixbuf_file_info(const char *path, int *width, int *height, char *format, size_t format_length) {
    GdkPixbufFormat *info = gdk_pixbuf_get_file_info(path, width, height);
    if (info == NULL) return 0;
    gchar *name = gdk_pixbuf_format_get_name(info);
    if (format_length > 0) {
        strncpy(format, name ? name : "", format_length - 1);
        format[format_length - 1] = 0;
    }
    g_free(name);
    return 1;
}

/* Decodes the file's (first) image; NULL with the reason in `reason` on failure. Free with CPixbuf_release. */
static inline void *CPixbuf_load(const char *path, char *reason, size_t reason_length) {
    GError *error = NULL;
    GdkPixbuf *pixbuf = gdk_pixbuf_new_from_file(path, &error);
    if (pixbuf == NULL) {
        if (reason_length > 0) {
            strncpy(reason, error && error->message ? error->message : "gdk-pixbuf cannot decode it", reason_length - 1);
            reason[reason_length - 1] = 0;
        }
        if (error) g_error_free(error);
    }
    return pixbuf;
}

static inline int CPixbuf_width(void *pixbuf) { return gdk_pixbuf_get_width((GdkPixbuf *)pixbuf); }
static inline int CPixbuf_height(void *pixbuf) { return gdk_pixbuf_get_height((GdkPixbuf *)pixbuf); }
static inline int CPixbuf_channels(void *pixbuf) { return gdk_pixbuf_get_n_channels((GdkPixbuf *)pixbuf); }
static inline int CPixbuf_bits(void *pixbuf) { return gdk_pixbuf_get_bits_per_sample((GdkPixbuf *)pixbuf); }
static inline int CPixbuf_stride(void *pixbuf) { return gdk_pixbuf_get_rowstride((GdkPixbuf *)pixbuf); }
static inline const unsigned char *CPixbuf_pixels(void *pixbuf) { return gdk_pixbuf_read_pixels((GdkPixbuf *)pixbuf); }
static inline void CPixbuf_release(void *pixbuf) { g_object_unref(pixbuf); }
#endif
