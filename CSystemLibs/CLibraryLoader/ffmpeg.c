/* libavformat and libavcodec, loaded on first use (see loader.h); libavutil and libswscale, which are light, stay
 * linked as usual. */
#include "loader.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/macros.h>

static struct lazy_library format_library = {"libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR), NULL};
static struct lazy_library codec_library = {"libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR), NULL};

/* libavformat */
FORWARD(format_library, int, av_find_best_stream,
        (AVFormatContext *ic, enum AVMediaType type, int wanted_stream_nb, int related_stream,
         const AVCodec **decoder_ret, int flags),
        (ic, type, wanted_stream_nb, related_stream, decoder_ret, flags))
FORWARD(format_library, int, av_interleaved_write_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt))
FORWARD(format_library, int, av_read_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt))
FORWARD(format_library, int, av_seek_frame, (AVFormatContext *s, int stream_index, int64_t timestamp, int flags),
        (s, stream_index, timestamp, flags))
FORWARD(format_library, uint8_t *, av_stream_get_side_data,
        (const AVStream *stream, enum AVPacketSideDataType type, size_t *size), (stream, type, size))
FORWARD(format_library, int, av_write_trailer, (AVFormatContext *s), (s))
FORWARD(format_library, AVFormatContext *, avformat_alloc_context, (void), ())
FORWARD(format_library, int, avformat_alloc_output_context2,
        (AVFormatContext **ctx, const AVOutputFormat *oformat, const char *format_name, const char *filename),
        (ctx, oformat, format_name, filename))
FORWARD_VOID(format_library, avformat_close_input, (AVFormatContext **s), (s))
FORWARD(format_library, int, avformat_find_stream_info, (AVFormatContext *ic, AVDictionary **options), (ic, options))
FORWARD_VOID(format_library, avformat_free_context, (AVFormatContext *s), (s))
FORWARD(format_library, AVStream *, avformat_new_stream, (AVFormatContext *s, const AVCodec *c), (s, c))
FORWARD(format_library, int, avformat_open_input,
        (AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options),
        (ps, url, fmt, options))
FORWARD(format_library, int, avformat_write_header, (AVFormatContext *s, AVDictionary **options), (s, options))
FORWARD(format_library, int, avio_closep, (AVIOContext **s), (s))
FORWARD(format_library, int, avio_open, (AVIOContext **s, const char *url, int flags), (s, url, flags))

/* libavcodec */
FORWARD(codec_library, int, av_new_packet, (AVPacket *pkt, int size), (pkt, size))
FORWARD(codec_library, AVPacket *, av_packet_alloc, (void), ())
FORWARD_VOID(codec_library, av_packet_free, (AVPacket **pkt), (pkt))
FORWARD_VOID(codec_library, av_packet_rescale_ts, (AVPacket *pkt, AVRational tb_src, AVRational tb_dst),
             (pkt, tb_src, tb_dst))
FORWARD_VOID(codec_library, av_packet_unref, (AVPacket *pkt), (pkt))
FORWARD(codec_library, AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec))
FORWARD(codec_library, const AVCodec *, avcodec_find_decoder, (enum AVCodecID id), (id))
FORWARD(codec_library, const AVCodec *, avcodec_find_encoder, (enum AVCodecID id), (id))
FORWARD(codec_library, const AVCodec *, avcodec_find_encoder_by_name, (const char *name), (name))
FORWARD_VOID(codec_library, avcodec_free_context, (AVCodecContext **avctx), (avctx))
FORWARD(codec_library, const char *, avcodec_get_name, (enum AVCodecID id), (id))
FORWARD(codec_library, int, avcodec_open2, (AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options),
        (avctx, codec, options))
FORWARD(codec_library, int, avcodec_parameters_copy, (AVCodecParameters *dst, const AVCodecParameters *src),
        (dst, src))
FORWARD(codec_library, int, avcodec_parameters_from_context, (AVCodecParameters *par, const AVCodecContext *codec),
        (par, codec))
FORWARD(codec_library, int, avcodec_parameters_to_context, (AVCodecContext *codec, const AVCodecParameters *par),
        (codec, par))
FORWARD(codec_library, int, avcodec_receive_frame, (AVCodecContext *avctx, AVFrame *frame), (avctx, frame))
FORWARD(codec_library, int, avcodec_receive_packet, (AVCodecContext *avctx, AVPacket *avpkt), (avctx, avpkt))
FORWARD(codec_library, int, avcodec_send_frame, (AVCodecContext *avctx, const AVFrame *frame), (avctx, frame))
FORWARD(codec_library, int, avcodec_send_packet, (AVCodecContext *avctx, const AVPacket *avpkt), (avctx, avpkt))
