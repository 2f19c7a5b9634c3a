#define _GNU_SOURCE
#include <malloc.h>
#include "CDocRouteShim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/openat2.h>
#endif

int docroute_peer_credentials_get(int fd, docroute_peer_credentials *out) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        return -1;
    }
    out->pid = cred.pid;
    out->uid = cred.uid;
    out->gid = cred.gid;
    return 0;
}

int docroute_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

ssize_t docroute_copy_file_range(int fd_in, int fd_out, size_t len) {
    return copy_file_range(fd_in, NULL, fd_out, NULL, len, 0);
}

ssize_t docroute_copy_file_range_at(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len) {
    return copy_file_range(fd_in, (loff_t *)off_in, fd_out, (loff_t *)off_out, len, 0);
}

int docroute_syncfs(int fd) {
    return syncfs(fd);
}

int docroute_openat2_beneath(int dirfd, const char *path, int flags, mode_t mode) {
#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
    struct open_how how = {
        .flags = (uint64_t)flags,
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
#else
    errno = ENOSYS;
    return -1;
#endif
}

int docroute_set_access_acl(int fd, const void *value, size_t size) {
    return fsetxattr(fd, "system.posix_acl_access", value, size, 0);
}

const uint32_t docroute_in_close_write = IN_CLOSE_WRITE;
const uint32_t docroute_in_moved_to = IN_MOVED_TO;
const uint32_t docroute_in_moved_from = IN_MOVED_FROM;
const uint32_t docroute_in_delete = IN_DELETE;
const uint32_t docroute_in_create = IN_CREATE;
const uint32_t docroute_in_delete_self = IN_DELETE_SELF;
const uint32_t docroute_in_move_self = IN_MOVE_SELF;
const uint32_t docroute_in_q_overflow = IN_Q_OVERFLOW;
const uint32_t docroute_in_isdir = IN_ISDIR;
const uint32_t docroute_in_ignored = IN_IGNORED;
const uint32_t docroute_in_onlydir = IN_ONLYDIR;
const uint32_t docroute_in_dont_follow = IN_DONT_FOLLOW;
const uint32_t docroute_in_excl_unlink = IN_EXCL_UNLINK;

int docroute_set_fs_uid(uint32_t uid) { return setfsuid(uid); }
int docroute_set_fs_gid(uint32_t gid) { return setfsgid(gid); }

int docroute_limit_malloc_arenas(int count) {
#ifdef __GLIBC__
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}
