#ifndef CLCMS2_SHIM_H
#define CLCMS2_SHIM_H
#include <lcms2.h>

/* Pixel layouts are macro expressions Swift cannot import. */
static inline cmsUInt32Number CLCMS2_TYPE_RGB_8(void) { return TYPE_RGB_8; }
static inline cmsUInt32Number CLCMS2_TYPE_RGBA_8(void) { return TYPE_RGBA_8; }
static inline cmsUInt32Number CLCMS2_TYPE_CMYK_8(void) { return TYPE_CMYK_8; }
/* Adobe (Photoshop) CMYK JPEGs store inverted samples: 0 means full ink. */
static inline cmsUInt32Number CLCMS2_TYPE_CMYK_8_REV(void) { return TYPE_CMYK_8_REV; }
static inline cmsUInt32Number CLCMS2_INTENT_PERCEPTUAL(void) { return INTENT_PERCEPTUAL; }
static inline cmsUInt32Number CLCMS2_INTENT_RELATIVE_COLORIMETRIC(void) { return INTENT_RELATIVE_COLORIMETRIC; }
static inline cmsUInt32Number CLCMS2_FLAGS_COPY_ALPHA(void) { return cmsFLAGS_COPY_ALPHA; }
static inline cmsUInt32Number CLCMS2_FLAGS_BLACKPOINTCOMPENSATION(void) { return cmsFLAGS_BLACKPOINTCOMPENSATION; }
#endif
