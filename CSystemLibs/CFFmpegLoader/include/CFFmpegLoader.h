#ifndef CFFMPEG_LOADER_H
#define CFFMPEG_LOADER_H
/* libavformat and libavcodec are loaded on first use, not at start (see loader.c). */
/* 1 when both libraries are loaded (their first call has happened), 0 otherwise. */
int CFFmpegLoader_loaded(void);
#endif
