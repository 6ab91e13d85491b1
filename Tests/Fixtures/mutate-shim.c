/* An LD_PRELOAD shim for the mutation tests: each read() past the start of a file whose name contains
   "MUTATE_APPEND_", "MUTATE_TRUNCATE_" or "MUTATE_REPLACE_" first changes that file as another program would
   while it is being read: one byte appended, cut to half its size, or a copy with one more byte renamed over
   its name.
   Built by the test with `cc -shared`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static void mutate(int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    if (strstr(path, "MUTATE_APPEND_")) {
        int out = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (out >= 0) { (void)!write(out, "+", 1); close(out); }
    } else if (strstr(path, "MUTATE_TRUNCATE_")) {
        struct stat info;
        if (stat(path, &info) == 0) (void)!truncate(path, info.st_size / 2);
    } else if (strstr(path, "MUTATE_REPLACE_")) {
        char fresh[4200];
        snprintf(fresh, sizeof fresh, "%s.new", path);
        int in = open(path, O_RDONLY | O_CLOEXEC);
        int out = open(fresh, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (in >= 0 && out >= 0) {
            char chunk[65536];
            ssize_t got;
            while ((got = pread(in, chunk, sizeof chunk, lseek(out, 0, SEEK_CUR))) > 0) (void)!write(out, chunk, (size_t)got);
            (void)!write(out, "+", 1);
            rename(fresh, path);
        }
        if (in >= 0) close(in);
        if (out >= 0) close(out);
    }
}

ssize_t read(int fd, void *buffer, size_t count) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    if (lseek(fd, 0, SEEK_CUR) > 0) mutate(fd);
    return real(fd, buffer, count);
}
