#ifndef CARCHIVE_SHIM_H
#define CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <zlib.h>

/* A reader for the formats cairn walks in place: zip (by its central directory, or entry by entry from the start
   when there is none: a truncated archive), tar
   (plain or gzip, bzip2, xz, zstd compressed). Zip names without the UTF-8 flag are read as CP437, as zip's
   specification says, rather than in the process's locale. */
static inline struct archive *CArchive_reader(void) {
    struct archive *a = archive_read_new();
    if (a == NULL) return NULL;
    archive_read_support_filter_all(a);
    archive_read_support_format_zip(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_gnutar(a);
    (void)archive_read_set_format_option(a, "zip", "hdrcharset", "CP437");
    return a;
}

/* libarchive converts names through the C library's multibyte functions: in the "C" locale a Swift program starts
   in, a name outside ASCII would not convert. C.UTF-8 for this thread while a reader is used, then what it had. */
static inline locale_t CArchive_enter_utf8(void) {
    static __thread locale_t utf8 = (locale_t)0;
    if (utf8 == (locale_t)0) utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (utf8 == (locale_t)0) return (locale_t)0;
    return uselocale(utf8);
}
static inline void CArchive_leave(locale_t previous) {
    if (previous != (locale_t)0) uselocale(previous);
}
/* A zip entry's deflated bytes, read at their offset: raw deflate (no zlib header). inflateInit2 is a macro. */
static inline int CArchive_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}
#endif
