#ifndef CLIBRARY_LOADER_H
#define CLIBRARY_LOADER_H
/* Nothing to call: the files beside this one define the functions cairn uses from libraries loaded on first use
   (FFmpeg's libavformat and libavcodec, libheif, libjxl), each forwarding to the library's own. */
#endif
