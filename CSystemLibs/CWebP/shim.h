#ifndef CWEBP_SHIM_H
#define CWEBP_SHIM_H
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

/* The ABI-checked entry points are macros around these *Internal calls. */
static inline int CWebP_GetFeatures(const uint8_t *data, size_t size, WebPBitstreamFeatures *features) {
    return WebPGetFeatures(data, size, features) == VP8_STATUS_OK;
}
static inline int CWebP_AnimDecoderOptionsInit(WebPAnimDecoderOptions *options) {
    return WebPAnimDecoderOptionsInit(options);
}
static inline WebPAnimDecoder *CWebP_AnimDecoderNew(const WebPData *data, const WebPAnimDecoderOptions *options) {
    return WebPAnimDecoderNew(data, options);
}
static inline int CWebP_ConfigInit(WebPConfig *config) {
    return WebPConfigInit(config);
}
static inline int CWebP_PictureInit(WebPPicture *picture) {
    return WebPPictureInit(picture);
}
#endif
