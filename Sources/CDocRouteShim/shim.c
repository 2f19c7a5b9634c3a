#define _GNU_SOURCE
#include <malloc.h>
#include "CDocRouteShim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int docroute_set_thread_groups(size_t count, const uint32_t *groups) {
    return (int)syscall(SYS_setgroups, count, groups);
}

int docroute_release_free_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

static int crash_marker_fd = -1;
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT};
#define CRASH_SIGNAL_COUNT (sizeof(crash_signals) / sizeof(crash_signals[0]))
static struct sigaction previous_actions[CRASH_SIGNAL_COUNT];

static void crash_marker_handler(int signal_number, siginfo_t *info, void *context) {
    int saved = errno;
    if (crash_marker_fd >= 0) {
        char byte = (char)signal_number;
        ssize_t ignored = write(crash_marker_fd, &byte, 1);
        (void)ignored;
        (void)fdatasync(crash_marker_fd);
    }
    // Let whoever had the signal before (the Swift runtime's backtracer) do its part...
    for (size_t index = 0; index < CRASH_SIGNAL_COUNT; index++) {
        if (crash_signals[index] != signal_number) {
            continue;
        }
        struct sigaction previous = previous_actions[index];
        if (previous.sa_flags & SA_SIGINFO) {
            if (previous.sa_sigaction != NULL) {
                previous.sa_sigaction(signal_number, info, context);
            }
        } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler != NULL) {
            previous.sa_handler(signal_number);
        }
    }
    // ...then end the way the signal's default action does, whatever that handler chose: a fault
    // raised by an instruction happens again on return; one sent by kill(2) is raised again.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof(fallback));
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal_number, &fallback, NULL);
    errno = saved;
    if (info == NULL || info->si_code <= 0) {
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, signal_number);
        raise(signal_number);
        sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    }
}

int docroute_install_crash_marker(int fd) {
    crash_marker_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = crash_marker_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < CRASH_SIGNAL_COUNT; index++) {
        if (sigaction(crash_signals[index], &action, &previous_actions[index]) != 0) {
            return -1;
        }
    }
    return 0;
}

int docroute_ensure_alternate_signal_stack(void) {
    stack_t current;
    if (sigaltstack(NULL, &current) != 0) {
        return -1;
    }
    if (!(current.ss_flags & SS_DISABLE)) {
        return 0;
    }
    // Kept for the thread's life (a pool thread lives as long as the daemon).
    size_t size = 64 * 1024;
    void *memory = malloc(size);
    if (memory == NULL) {
        errno = ENOMEM;
        return -1;
    }
    stack_t stack = {.ss_sp = memory, .ss_size = size, .ss_flags = 0};
    return sigaltstack(&stack, NULL);
}

int docroute_limit_malloc_arenas(int count) {
#ifdef __GLIBC__
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}
