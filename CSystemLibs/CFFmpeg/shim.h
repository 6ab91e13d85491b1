#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
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
static inline int CFFmpeg_AVERROR_EXIT(void) { return AVERROR_EXIT; }
static inline int CFFmpeg_AVERROR_EAGAIN(void) { return AVERROR(EAGAIN); }
static inline int CFFmpeg_AVERROR_INVALIDDATA(void) { return AVERROR_INVALIDDATA; }
static inline int64_t CFFmpeg_AV_NOPTS_VALUE(void) { return AV_NOPTS_VALUE; }
static inline int CFFmpeg_AV_TIME_BASE(void) { return AV_TIME_BASE; }
static inline int CFFmpeg_AV_ERROR_MAX_STRING_SIZE(void) { return AV_ERROR_MAX_STRING_SIZE; }
static inline int CFFmpeg_AVERROR_DECODER_NOT_FOUND(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int CFFmpeg_AVERROR_DEMUXER_NOT_FOUND(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int CFFmpeg_AVERROR_ENCODER_NOT_FOUND(void) { return AVERROR_ENCODER_NOT_FOUND; }
static inline int CFFmpeg_AVERROR_STREAM_NOT_FOUND(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int CFFmpeg_AVERROR_PATCHWELCOME(void) { return AVERROR_PATCHWELCOME; }
static inline int CFFmpeg_AVERROR_INVALIDDATA_OR_EOF(int rc) { return rc == AVERROR_INVALIDDATA || rc == AVERROR_EOF; }
/* The POSIX errno behind an AVERROR(e) code, or 0 when it is an FFmpeg tag. */
static inline int CFFmpeg_AVUNERROR(int rc) { return (rc < 0 && rc > -4096) ? AVUNERROR(rc) : 0; }
static inline int CFFmpeg_AV_LOG_QUIET(void) { return AV_LOG_QUIET; }

/* AVFrame's data/linesize are C arrays (tuples in Swift); plane access by index is clearer. */
static inline uint8_t *CFFmpeg_frame_plane(const AVFrame *frame, int plane) { return frame->data[plane]; }
static inline int CFFmpeg_frame_linesize(const AVFrame *frame, int plane) { return frame->linesize[plane]; }
/* Points a frame's plane at memory another library owns (a decoded HEIF image), without copying. */
static inline void CFFmpeg_frame_borrow_plane(AVFrame *frame, int plane, uint8_t *data, int linesize) {
    frame->data[plane] = data;
    frame->linesize[plane] = linesize;
}

/* The rotation a display matrix asks for, in degrees counterclockwise, or NAN without one. */
static inline double CFFmpeg_stream_display_rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL || size < 9 * sizeof(int32_t)) return NAN;
    return av_display_rotation_get((const int32_t *)matrix);
}

/* Whether a pixel format carries alpha (palettes may), is RGB, and how many bits a component holds. */
static inline int CFFmpeg_pix_fmt_has_alpha(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return d != NULL && (d->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
}
static inline int CFFmpeg_pix_fmt_is_rgb(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return d != NULL && (d->flags & AV_PIX_FMT_FLAG_RGB) != 0;
}
static inline int CFFmpeg_pix_fmt_is_gray(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return d != NULL && d->nb_components <= 2 && (d->flags & AV_PIX_FMT_FLAG_RGB) == 0;
}
static inline int CFFmpeg_pix_fmt_chroma_shift_w(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return d != NULL ? d->log2_chroma_w : 0;
}
static inline int CFFmpeg_pix_fmt_chroma_shift_h(int format) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    return d != NULL ? d->log2_chroma_h : 0;
}

/* Flags whose macros are expressions. */
static inline int CFFmpeg_AV_CODEC_FLAG_QSCALE(void) { return AV_CODEC_FLAG_QSCALE; }
static inline int CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int CFFmpeg_AVFMT_GLOBALHEADER(void) { return AVFMT_GLOBALHEADER; }
static inline int CFFmpeg_AVFMT_NOFILE(void) { return AVFMT_NOFILE; }
static inline int CFFmpeg_AVIO_FLAG_WRITE(void) { return AVIO_FLAG_WRITE; }
static inline int CFFmpeg_FF_QP2LAMBDA(void) { return FF_QP2LAMBDA; }
static inline int CFFmpeg_SWS_LANCZOS(void) { return SWS_LANCZOS; }
static inline int CFFmpeg_SWS_BICUBIC(void) { return SWS_BICUBIC; }
static inline int CFFmpeg_SWS_AREA(void) { return SWS_AREA; }
static inline int CFFmpeg_SWS_ACCURATE_RND(void) { return SWS_ACCURATE_RND; }
static inline int CFFmpeg_SWS_FULL_CHR_H_INT(void) { return SWS_FULL_CHR_H_INT; }
static inline int CFFmpeg_SWS_FULL_CHR_H_INP(void) { return SWS_FULL_CHR_H_INP; }
static inline int CFFmpeg_SWS_CS_DEFAULT(void) { return SWS_CS_DEFAULT; }
static inline int CFFmpeg_SWS_CS_ITU709(void) { return SWS_CS_ITU709; }
static inline int CFFmpeg_SWS_CS_BT2020(void) { return SWS_CS_BT2020; }
static inline int CFFmpeg_AVSEEK_FLAG_BACKWARD(void) { return AVSEEK_FLAG_BACKWARD; }
static inline int CFFmpeg_AV_FRAME_CROP_UNALIGNED(void) { return AV_FRAME_CROP_UNALIGNED; }
static inline int CFFmpeg_AV_CODEC_FLAG_CLOSED_GOP(void) { return (int)AV_CODEC_FLAG_CLOSED_GOP; }

/* An audio FIFO fed from and drained into frames: extended_data is uint8_t ** where the FIFO takes void **. */
static inline int CFFmpeg_audio_fifo_write_frame(AVAudioFifo *fifo, const AVFrame *frame) {
    return av_audio_fifo_write(fifo, (void **)frame->extended_data, frame->nb_samples);
}
static inline int CFFmpeg_audio_fifo_read_frame(AVAudioFifo *fifo, AVFrame *frame, int samples) {
    return av_audio_fifo_read(fifo, (void **)frame->extended_data, samples);
}
/* Fills a frame's samples with silence (zero for signed and float formats, the midpoint for unsigned). */
static inline int CFFmpeg_frame_set_silence(AVFrame *frame) {
    return av_samples_set_silence(frame->extended_data, 0, frame->nb_samples, frame->ch_layout.nb_channels,
                                  (enum AVSampleFormat)frame->format);
}
#endif
