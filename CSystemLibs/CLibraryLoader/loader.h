/*
 * Libraries loaded when first called rather than when cairn starts.
 *
 * A library bound at start costs every cairn command its loading, its relocations and its initialisers (and those
 * of every library it links), even a command that never uses it: FFmpeg's libavformat and libavcodec link about 130
 * libraries; libheif and libjxl bring their codecs and libhwy, whose initialisers time the CPU. Each function cairn
 * calls is defined in this target with the headers' own prototype and forwards to the library's, looked up once. A
 * missing library ends the process with its name and the reason (exit 69), as a missing linked one would at start.
 */
#ifndef CLIBRARY_LOADER_INTERNAL_H
#define CLIBRARY_LOADER_INTERNAL_H

/* One library: its file name (the soname the headers were built against) and, once opened, its handle. */
struct lazy_library {
    const char *file;
    void *handle;
};

/* The library's own definition of `name`: looked up in the library (and what it links), never in cairn's scope,
   where the forwarding definition of the same name would be found first. Opens the library on first use. */
void *lazy_library_symbol(struct lazy_library *library, const char *name);

/* One forwarding definition: the address is looked up on the first call and kept. */
#define LAZY_LOOKUP(library, name, result, parameters)                                                         \
    typedef result(*function_type) parameters;                                                                 \
    static function_type cached;                                                                               \
    function_type function = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                                       \
    if (function == NULL) {                                                                                    \
        function = (function_type)lazy_library_symbol(&library, #name);                                        \
        __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                                                 \
    }
#define FORWARD(library, result, name, parameters, arguments)                                                  \
    result name parameters {                                                                                   \
        LAZY_LOOKUP(library, name, result, parameters)                                                         \
        return function arguments;                                                                             \
    }
#define FORWARD_VOID(library, name, parameters, arguments)                                                     \
    void name parameters {                                                                                     \
        LAZY_LOOKUP(library, name, void, parameters)                                                           \
        function arguments;                                                                                    \
    }

#endif
