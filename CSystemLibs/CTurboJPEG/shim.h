#ifndef CTURBOJPEG_SHIM_H
#define CTURBOJPEG_SHIM_H
#include <turbojpeg.h>

/* The size of a dimension scaled by num/denom, as libjpeg-turbo rounds it (TJSCALED is a macro). */
static inline int CTurboJPEG_scaled(int dimension, int num, int denom) {
    tjscalingfactor factor = { num, denom };
    return TJSCALED(dimension, factor);
}
#endif
