/* libjxl, loaded on first use (see loader.h): it links libhwy, whose initialisers time the CPU, and brotli. */
#include "loader.h"

#include <jxl/decode.h>
#include <jxl/version.h>

#define JXL_STRINGIFY(x) #x
#define JXL_TOSTRING(x) JXL_STRINGIFY(x)
/* libjxl 0.x names its soname by major and minor (libjxl.so.0.7); later ones by major. */
#if JPEGXL_MAJOR_VERSION == 0
static struct lazy_library jxl = {"libjxl.so.0." JXL_TOSTRING(JPEGXL_MINOR_VERSION), NULL};
#else
static struct lazy_library jxl = {"libjxl.so." JXL_TOSTRING(JPEGXL_MAJOR_VERSION), NULL};
#endif

FORWARD(jxl, uint32_t, JxlDecoderVersion, (void), ())
FORWARD(jxl, JxlDecoder *, JxlDecoderCreate, (const JxlMemoryManager *memory_manager), (memory_manager))
FORWARD_VOID(jxl, JxlDecoderDestroy, (JxlDecoder *dec), (dec))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSubscribeEvents, (JxlDecoder *dec, int events_wanted), (dec, events_wanted))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetKeepOrientation, (JxlDecoder *dec, JXL_BOOL skip_reorientation),
        (dec, skip_reorientation))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetDecompressBoxes, (JxlDecoder *dec, JXL_BOOL decompress), (dec, decompress))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetInput, (JxlDecoder *dec, const uint8_t *data, size_t size),
        (dec, data, size))
FORWARD_VOID(jxl, JxlDecoderCloseInput, (JxlDecoder *dec), (dec))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderProcessInput, (JxlDecoder *dec), (dec))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderGetBasicInfo, (const JxlDecoder *dec, JxlBasicInfo *info), (dec, info))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderGetBoxType, (JxlDecoder *dec, JxlBoxType type, JXL_BOOL decompressed),
        (dec, type, decompressed))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetBoxBuffer, (JxlDecoder *dec, uint8_t *data, size_t size),
        (dec, data, size))
FORWARD(jxl, size_t, JxlDecoderReleaseBoxBuffer, (JxlDecoder *dec), (dec))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderGetICCProfileSize,
        (const JxlDecoder *dec, const JxlPixelFormat *unused_format, JxlColorProfileTarget target, size_t *size),
        (dec, unused_format, target, size))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderGetColorAsICCProfile,
        (const JxlDecoder *dec, const JxlPixelFormat *unused_format, JxlColorProfileTarget target,
         uint8_t *icc_profile, size_t size),
        (dec, unused_format, target, icc_profile, size))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderGetColorAsEncodedProfile,
        (const JxlDecoder *dec, const JxlPixelFormat *unused_format, JxlColorProfileTarget target,
         JxlColorEncoding *color_encoding),
        (dec, unused_format, target, color_encoding))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetPreferredColorProfile,
        (JxlDecoder *dec, const JxlColorEncoding *color_encoding), (dec, color_encoding))
FORWARD(jxl, JxlDecoderStatus, JxlDecoderSetImageOutCallback,
        (JxlDecoder *dec, const JxlPixelFormat *format, JxlImageOutCallback callback, void *opaque),
        (dec, format, callback, opaque))
