#ifndef CFFMPEG_LOADER_H
#define CFFMPEG_LOADER_H
/* Nothing to call: loader.c defines the FFmpeg functions cairn uses, each loading its library on first use. */
#endif
