#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/display.h>
#include <libavutil/dict.h>
#include <libavutil/pixdesc.h>
#include <errno.h>

/* Function-like and constant macros Swift cannot import, as prefixed inline functions. */
static inline int CFFmpeg_AVERROR(int posix_errno) { return AVERROR(posix_errno); }
static inline int CFFmpeg_AVERROR_EOF(void) { return AVERROR_EOF; }
static inline int CFFmpeg_AVERROR_EAGAIN(void) { return AVERROR(EAGAIN); }
static inline int CFFmpeg_AVERROR_INVALIDDATA(void) { return AVERROR_INVALIDDATA; }
static inline int64_t CFFmpeg_AV_NOPTS_VALUE(void) { return AV_NOPTS_VALUE; }
static inline int CFFmpeg_AV_TIME_BASE(void) { return AV_TIME_BASE; }
static inline int CFFmpeg_AV_ERROR_MAX_STRING_SIZE(void) { return AV_ERROR_MAX_STRING_SIZE; }
#endif
