#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Opens `path` for reading with no symbolic link anywhere along it (openat2 RESOLVE_NO_SYMLINKS): a folder of the
   source swapped for a link after the scan is refused, not followed out of the source. Kernels before 5.6 lack
   openat2: there, only the last component is guarded (O_NOFOLLOW). */
static inline int CLinux_open_read_no_symlinks(const char *path) {
    struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW, .mode = 0, .resolve = RESOLVE_NO_SYMLINKS };
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM)) return open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    return (int)fd;
}

/* Opens a folder inside the library with no symbolic link anywhere along its path, so a rename made relative to
   it lands in that folder even if a link is swapped in afterwards. ELOOP (or ENOTDIR) when there is a link. */
static inline int CLinux_open_directory_no_symlinks(const char *path) {
    struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, .mode = 0, .resolve = RESOLVE_NO_SYMLINKS };
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM)) return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    return (int)fd;
}

/* Flushes every dirty file and folder of the file system that holds `fd` (syncfs(2), a GNU extension glibc
   declares only under _GNU_SOURCE): one journal commit for a whole group of new library files. */
static inline int CLinux_syncfs(int fd) {
    return (int)syscall(SYS_syncfs, fd);
}

/* Starts writeback of a range just written, without waiting for it (sync_file_range SYNC_FILE_RANGE_WRITE, also
   behind _GNU_SOURCE): a big copy's disk writes overlap its reading and hashing instead of all waiting for the
   final sync. Not a durability call: the fsync or syncfs that follows still decides that. */
static inline int CLinux_start_writeback(int fd, long long offset, long long length) {
    return (int)syscall(SYS_sync_file_range, fd, offset, length, 2 /* SYNC_FILE_RANGE_WRITE */);
}
#endif
