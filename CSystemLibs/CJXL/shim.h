#ifndef CJXL_SHIM_H
#define CJXL_SHIM_H
#include <jxl/decode.h>
#include <stdint.h>
#include <string.h>

/* libjxl 0.7 streams rows to a float callback without holding the whole frame (an 8-bit buffer output
   holds it, and an 8-bit callback keeps a float copy of it): rows are box-averaged here, 2^shift to a side,
   into a picture that is 4^shift times smaller. */
typedef struct {
    size_t width, height;         /* the decoded picture, as libjxl outputs it (upright) */
    size_t out_width, out_height; /* ceil(width / 2^shift), ceil(height / 2^shift) */
    unsigned shift;               /* 0: one output pixel per input pixel */
    unsigned in_channels;         /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    unsigned out_channels;        /* 3 or 4 */
    uint16_t *sums;               /* out_width * out_height * out_channels sums of 0..255 samples */
} CJXL_Accumulator;

static inline void CJXL_accumulate(void *opaque, size_t x, size_t y, size_t count, const void *pixels) {
    CJXL_Accumulator *a = (CJXL_Accumulator *)opaque;
    const float *in = (const float *)pixels;
    if (y >= a->height) return;
    uint16_t *row = a->sums + (y >> a->shift) * a->out_width * a->out_channels;
    for (size_t i = 0; i < count && x + i < a->width; i++, in += a->in_channels) {
        uint16_t *out = row + ((x + i) >> a->shift) * a->out_channels;
        float v[4];
        if (a->in_channels <= 2) {
            v[0] = v[1] = v[2] = in[0];
            v[3] = a->in_channels == 2 ? in[1] : 1.0f;
        } else {
            v[0] = in[0]; v[1] = in[1]; v[2] = in[2];
            v[3] = a->in_channels == 4 ? in[3] : 1.0f;
        }
        for (unsigned c = 0; c < a->out_channels; c++) {
            float s = v[c] * 255.0f + 0.5f;
            out[c] += (uint16_t)(s < 0.0f ? 0.0f : (s > 255.0f ? 255.0f : s));
        }
    }
}

/* Divides each sum by the number of pixels its block held (edge blocks hold fewer) into 8-bit samples,
   in place: sample k of the result is written at byte k, never ahead of the sums still to read. */
static inline void CJXL_accumulator_finish(CJXL_Accumulator *a) {
    uint8_t *bytes = (uint8_t *)a->sums;
    size_t side = (size_t)1 << a->shift;
    size_t k = 0;
    for (size_t oy = 0; oy < a->out_height; oy++) {
        size_t rows = a->height - oy * side < side ? a->height - oy * side : side;
        for (size_t ox = 0; ox < a->out_width; ox++) {
            size_t cols = a->width - ox * side < side ? a->width - ox * side : side;
            size_t n = rows * cols;
            for (unsigned c = 0; c < a->out_channels; c++, k++) {
                bytes[k] = (uint8_t)((a->sums[k] + n / 2) / n);
            }
        }
    }
}

static inline JxlDecoderStatus CJXL_set_accumulating_output(JxlDecoder *decoder, CJXL_Accumulator *accumulator) {
    JxlPixelFormat format = {accumulator->in_channels, JXL_TYPE_FLOAT, JXL_NATIVE_ENDIAN, 0};
    return JxlDecoderSetImageOutCallback(decoder, &format, CJXL_accumulate, accumulator);
}

/* Asks libjxl to render an XYB (lossy) picture straight to sRGB, so no ICC conversion follows. */
static inline JxlDecoderStatus CJXL_prefer_srgb(JxlDecoder *decoder, int gray) {
    JxlColorEncoding e;
    memset(&e, 0, sizeof e);
    e.color_space = gray ? JXL_COLOR_SPACE_GRAY : JXL_COLOR_SPACE_RGB;
    e.white_point = JXL_WHITE_POINT_D65;
    e.primaries = JXL_PRIMARIES_SRGB;
    e.transfer_function = JXL_TRANSFER_FUNCTION_SRGB;
    e.rendering_intent = JXL_RENDERING_INTENT_RELATIVE;
    return JxlDecoderSetPreferredColorProfile(decoder, &e);
}

/* 1 when the data's colour encoding is sRGB (or gray with sRGB's white point and curve): no conversion. */
static inline int CJXL_data_is_srgb(const JxlDecoder *decoder) {
    JxlColorEncoding e;
    if (JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &e) != JXL_DEC_SUCCESS) return 0;
    return e.white_point == JXL_WHITE_POINT_D65 && e.transfer_function == JXL_TRANSFER_FUNCTION_SRGB
        && (e.color_space == JXL_COLOR_SPACE_GRAY || (e.color_space == JXL_COLOR_SPACE_RGB && e.primaries == JXL_PRIMARIES_SRGB));
}
#endif
