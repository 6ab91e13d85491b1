#ifndef CTIFF_SHIM_H
#define CTIFF_SHIM_H
#include <tiffio.h>

/* TIFFGetField is variadic, which Swift cannot call. */
static inline int CTIFF_dimensions(TIFF *tif, uint32_t *width, uint32_t *height) {
    return TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, width) && TIFFGetField(tif, TIFFTAG_IMAGELENGTH, height);
}
static inline int CTIFF_orientation(TIFF *tif) {
    uint16_t orientation = ORIENTATION_TOPLEFT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    return orientation;
}
/* Pixels in the top-left-first order whatever the file's Orientation tag says, as RGBA bytes. */
static inline int CTIFF_read_rgba_upright(TIFF *tif, uint32_t width, uint32_t height, uint32_t *raster) {
    return TIFFReadRGBAImageOriented(tif, width, height, raster, ORIENTATION_TOPLEFT, 0);
}
/* The sample layout, for pictures libtiff's RGBA interface refuses (32-bit integer or float samples). */
static inline void CTIFF_sample_layout(TIFF *tif, uint16_t *bits, uint16_t *samples, uint16_t *format, int *tiled) {
    *bits = 1; *samples = 1; *format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, format);
    *tiled = TIFFIsTiled(tif);
}
/* libtiff prints to stderr by default; cairn reports reasons itself. */
static inline void CTIFF_silence(void) {
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
}
#endif
