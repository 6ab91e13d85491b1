#include "loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t opening = PTHREAD_MUTEX_INITIALIZER;

static void *library_handle(struct lazy_library *library) {
    void *handle = __atomic_load_n(&library->handle, __ATOMIC_ACQUIRE);
    if (handle != NULL) return handle;
    pthread_mutex_lock(&opening);
    handle = library->handle;
    if (handle == NULL) {
        handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            const char *reason = dlerror();
            fprintf(stderr, "cairn: %s cannot be loaded (%s); install it (scripts/ensure-packages)\n", library->file,
                    reason ? reason : "unknown reason");
            _exit(69); /* EX_UNAVAILABLE */
        }
        __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&opening);
    return handle;
}

void *lazy_library_symbol(struct lazy_library *library, const char *name) {
    void *address = dlsym(library_handle(library), name);
    if (address == NULL) {
        const char *reason = dlerror();
        fprintf(stderr, "cairn: %s has no %s (%s)\n", library->file, name, reason ? reason : "unknown reason");
        _exit(69);
    }
    return address;
}
