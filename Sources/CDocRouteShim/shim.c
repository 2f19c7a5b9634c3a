#define _GNU_SOURCE
#include "CDocRouteShim.h"

#if defined(__linux__)
#include <malloc.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/capability.h>
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

int docroute_memfd_create(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}

ssize_t docroute_copy_file_range(int fd_in, int fd_out, size_t len) {
    return copy_file_range(fd_in, NULL, fd_out, NULL, len, 0);
}

ssize_t docroute_copy_file_range_at(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len) {
    return copy_file_range(fd_in, (loff_t *)off_in, fd_out, (loff_t *)off_out, len, 0);
}

int64_t docroute_seek_data(int fd, int64_t offset) {
    return (int64_t)lseek(fd, (off_t)offset, SEEK_DATA);
}

int64_t docroute_seek_hole(int fd, int64_t offset) {
    return (int64_t)lseek(fd, (off_t)offset, SEEK_HOLE);
}

int docroute_syncfs(int fd) {
    return syncfs(fd);
}

int docroute_start_writeback(int fd, int64_t offset, int64_t count) {
    return sync_file_range(fd, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older C libraries lack the name */
#endif

void *docroute_map_read_populated(int fd, int64_t offset, size_t length) {
    void *address = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, (off_t)offset);
    if (address == MAP_FAILED) {
        return NULL;
    }
    int result;
    do {
        result = madvise(address, length, MADV_POPULATE_READ);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        int saved = errno;
        munmap(address, length);
        errno = saved;
        return NULL;
    }
    return address;
}

int docroute_unmap(void *address, size_t length) {
    return munmap(address, length);
}

ssize_t docroute_random_bytes(void *buffer, size_t length) {
    return (ssize_t)syscall(SYS_getrandom, buffer, length, 0);
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

int docroute_fix_malloc_map_threshold(int bytes) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

int docroute_limit_malloc_arenas(int count) {
#ifdef __GLIBC__
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

#if defined(__linux__)
/// Reports a failed step to the parent and ends the child without running atexit handlers.
static void spawn_child_fail(int pipe_fd, int step) {
    int report[2] = {step, errno};
    ssize_t ignored = write(pipe_fd, report, sizeof(report));
    (void)ignored;
    _exit(127);
}

/// Closes every descriptor from `first` to `last` (close_range, else one by one).
static void spawn_close_range(unsigned int first, unsigned int last, unsigned int fallback_limit) {
    if (first > last) return;
#if defined(SYS_close_range)
    if (syscall(SYS_close_range, first, last, 0) == 0) return;
#endif
    for (unsigned int fd = first; fd <= last && fd < fallback_limit; fd++) close((int)fd);
}
#endif

int32_t docroute_spawn_handler(const char *path, char *const argv[], char *const envp[],
                               int change_identity, uint32_t uid, uint32_t gid,
                               const uint32_t *groups, size_t group_count, int *failed_step) {
#if defined(__linux__)
    *failed_step = docroute_spawn_ok;
    // Everything that may allocate or take a lock happens before fork.
    struct rlimit limit;
    unsigned int fallback_limit = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 1048576) {
        fallback_limit = (unsigned int)limit.rlim_cur;
    }
    int report_pipe[2];
    if (pipe2(report_pipe, O_CLOEXEC) != 0) {
        *failed_step = docroute_spawn_pipe;
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(report_pipe[0]);
        close(report_pipe[1]);
        errno = saved;
        *failed_step = docroute_spawn_fork;
        return -1;
    }
    if (pid == 0) {
        // The child: one thread, so only async-signal-safe calls and raw system calls from here.
        int out = report_pipe[1];
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++) {
            if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        // Nothing of the daemon's (its listening socket, the ledger, inotify) reaches the handler.
        spawn_close_range(3, (unsigned int)out - 1, fallback_limit);
        spawn_close_range((unsigned int)out + 1, ~0U, fallback_limit);

        // Ambient capabilities survive execve: clear them first (EINVAL: a kernel before 4.3 has none).
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
            spawn_child_fail(out, docroute_spawn_ambient);
        }
        if (change_identity) {
            if (syscall(SYS_setgroups, group_count, groups) != 0) spawn_child_fail(out, docroute_spawn_groups);
            if (syscall(SYS_setresgid, gid, gid, gid) != 0) spawn_child_fail(out, docroute_spawn_gid);
        }
        // The bounding set caps what an execve can ever grant (root's, file capabilities).
        // Dropping needs CAP_SETPCAP: without it the caller is not root, and what it holds is
        // emptied below, so the child keeps nothing either way.
        for (int cap = 0; cap < 64; cap++) {
            int present = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
            if (present < 0) break; // EINVAL: past the kernel's last capability
            if (present == 0) continue;
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
                if (errno == EPERM && !change_identity) break;
                spawn_child_fail(out, docroute_spawn_bounding);
            }
        }
        if (change_identity && syscall(SYS_setresuid, uid, uid, uid) != 0) spawn_child_fail(out, docroute_spawn_uid);
        // Effective, permitted and inheritable sets empty (a process may always lower its own).
        struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct data[2];
        memset(data, 0, sizeof(data));
        if (syscall(SYS_capset, &header, data) != 0) spawn_child_fail(out, docroute_spawn_capset);
        // No setuid program or file capability can give any of it back.
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) spawn_child_fail(out, docroute_spawn_no_new_privs);
        execve(path, argv, envp);
        spawn_child_fail(out, docroute_spawn_exec);
    }
    close(report_pipe[1]);
    int report[2] = {0, 0};
    size_t got = 0;
    while (got < sizeof(report)) {
        ssize_t n = read(report_pipe[0], (char *)report + got, sizeof(report) - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(report_pipe[0]);
    if (got == 0) return pid; // the pipe closed on execve: the handler runs
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    *failed_step = got == sizeof(report) ? report[0] : docroute_spawn_exec;
    errno = got == sizeof(report) ? report[1] : EIO;
    return -1;
#else
    (void)path; (void)argv; (void)envp; (void)change_identity; (void)uid; (void)gid; (void)groups; (void)group_count;
    *failed_step = docroute_spawn_fork;
    errno = ENOSYS;
    return -1;
#endif
}

#endif // defined(__linux__)
