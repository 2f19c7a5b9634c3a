#ifndef CDOCROUTE_SHIM_H
#define CDOCROUTE_SHIM_H

#include <stdint.h>
#include <sys/types.h>

// Everything here is a Linux system call or Linux behaviour (SO_PEERCRED, renameat2, openat2,
// inotify, setfsuid, MSG_CMSG_CLOEXEC): elsewhere the module is empty, as CNIOLinux's is, and a
// use of it fails to compile where it stands rather than at link time.
#if defined(__linux__)

/// Peer credentials of a connected Unix socket (SO_PEERCRED).
/// `struct ucred` needs _GNU_SOURCE, which Swift's Glibc import does not define.
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} docroute_peer_credentials;

/// Returns 0 and fills `out`, or -1 with errno set.
int docroute_peer_credentials_get(int fd, docroute_peer_credentials *out);

/// renameat2(RENAME_NOREPLACE): fails with EEXIST instead of replacing `newpath`.
int docroute_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file in memory, in no folder, gone with its
/// last descriptor; `name` shows only in /proc.
int docroute_memfd_create(const char *name);

/// copy_file_range(2) without offsets: copies from the current positions.
ssize_t docroute_copy_file_range(int fd_in, int fd_out, size_t len);

/// copy_file_range(2) with explicit offsets (either may be NULL to use and advance the file position).
ssize_t docroute_copy_file_range_at(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len);

/// lseek(fd, offset, SEEK_DATA): the start of the first range holding data at or after `offset`;
/// -1 with ENXIO when only a hole follows up to the end. SEEK_DATA needs _GNU_SOURCE. A file
/// system without hole reporting answers as if the whole file were data.
int64_t docroute_seek_data(int fd, int64_t offset);

/// lseek(fd, offset, SEEK_HOLE): the start of the first hole at or after `offset` (the end of the
/// file counts as one); -1 with ENXIO at or past the end. Needs _GNU_SOURCE.
int64_t docroute_seek_hole(int fd, int64_t offset);

/// mallopt(M_ARENA_MAX, count): at most `count` malloc arenas (glibc makes up to eight per core,
/// one per allocating thread, each keeping what it freed). Returns 1 on success.
int docroute_limit_malloc_arenas(int count);

/// mallopt(M_MMAP_THRESHOLD, bytes): blocks of `bytes` or more get a mapping of their own,
/// unmapped when freed; setting it also stops glibc from raising the threshold by itself.
/// Returns 1 on success.
int docroute_fix_malloc_map_threshold(int bytes);

/// syncfs(2): writes back everything dirty on the file system holding `fd`, in one call.
/// Needs _GNU_SOURCE, which Swift's Glibc import does not define.
int docroute_syncfs(int fd);

/// sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE): starts writing back a range of a
/// file without waiting for it, so the disk works while the next range is copied. Durability still
/// comes from a later fsync or syncfs. Needs _GNU_SOURCE. Returns 0, or -1 with errno.
int docroute_start_writeback(int fd, int64_t offset, int64_t count);

/// mmap(NULL, length, PROT_READ, MAP_SHARED, fd, offset) and madvise(MADV_POPULATE_READ): maps a
/// range of a file read-only with every page read in first, so that a read error (EIO, or EFAULT
/// past the end) is an errno here rather than a SIGBUS when the bytes are touched. `offset` must
/// be a multiple of the page size. Returns the address, or NULL with errno set (EINVAL from a
/// kernel before 5.14, which lacks MADV_POPULATE_READ); on failure nothing stays mapped.
void *docroute_map_read_populated(int fd, int64_t offset, size_t length);

/// munmap(2) of a mapping made by docroute_map_read_populated.
int docroute_unmap(void *address, size_t length);

/// getrandom(2): up to `length` random bytes from the kernel's generator into `buffer` (flags 0:
/// blocks only until the generator is first seeded at boot). Returns the count or -1 with errno.
ssize_t docroute_random_bytes(void *buffer, size_t length);

/// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: opens `path` below
/// `dirfd` and fails (ELOOP or EXDEV) rather than follow any symbolic link or leave `dirfd`.
/// Fails with ENOSYS where the kernel (before 5.6) or a seccomp filter lacks openat2.
int docroute_openat2_beneath(int dirfd, const char *path, int flags, mode_t mode);

/// fsetxattr(fd, "system.posix_acl_access", value, size, 0): a POSIX access ACL in the kernel's
/// binary form (what libacl's acl_set_fd writes). <sys/xattr.h> is not in Swift's Glibc module.
int docroute_set_access_acl(int fd, const void *value, size_t size);

/// The inotify mask bits, as plain constants Swift can import.
extern const uint32_t docroute_in_close_write;
extern const uint32_t docroute_in_moved_to;
extern const uint32_t docroute_in_moved_from;
extern const uint32_t docroute_in_delete;
extern const uint32_t docroute_in_create;
extern const uint32_t docroute_in_delete_self;
extern const uint32_t docroute_in_move_self;
extern const uint32_t docroute_in_q_overflow;
extern const uint32_t docroute_in_isdir;
extern const uint32_t docroute_in_ignored;
extern const uint32_t docroute_in_onlydir;
extern const uint32_t docroute_in_dont_follow;
extern const uint32_t docroute_in_excl_unlink;

/// setfsuid/setfsgid: per-thread file-system identity (Linux). Return the previous id.
int docroute_set_fs_uid(uint32_t uid);
int docroute_set_fs_gid(uint32_t gid);

/// The daemon's side of descriptor passing (`open-descriptor`, PROTOCOL.md); the client's sendmsg
/// is in the client package's own shim.
/// recvmsg(2) of up to `length` bytes without blocking (MSG_DONTWAIT, MSG_CMSG_CLOEXEC), with room
/// for exactly one passed descriptor: `*descriptor` is it, or -1. Room for one only, so a sender
/// that attaches more can never make the kernel install them here: the kernel sets MSG_CTRUNC and
/// drops what did not fit, and `*truncated` is set to 1.
/// Returns the bytes read (0 at end of stream), or -1 with errno set (EAGAIN: nothing to read).
ssize_t docroute_receive_one_descriptor(int socket, void *bytes, size_t length, int *descriptor, int *truncated);

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK (GNU, so Swift's Glibc import lacks it).
int docroute_accept_nonblocking(int listener);

/// epoll_create1(EPOLL_CLOEXEC) (sys/epoll.h is not in Swift's Glibc module).
int docroute_epoll_open(void);

/// epoll_ctl(2) with the event's data as a 64-bit token; `operation` is one of the three below. `struct epoll_event` is packed on x86-64,
/// a layout Swift should not have to reproduce: it stays on this side.
int docroute_epoll_control(int epoll, int operation, int fd, uint32_t events, uint64_t token);

/// epoll_wait(2) into two plain arrays (the tokens and the event bits). Returns the count, or -1
/// with errno set.
int docroute_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout_milliseconds);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a counter another thread writes to wake an epoll wait.
int docroute_eventfd_open(void);
/// Adds 1 to the counter (wakes a waiter); 0, or -1 with errno set (EAGAIN: it is awake already).
int docroute_eventfd_signal(int fd);
/// Reads and resets the counter; 0, or -1 with errno set (EAGAIN: nothing was signalled).
int docroute_eventfd_drain(int fd);

/// The epoll event bits, as plain constants Swift can import.
extern const uint32_t docroute_epoll_in;
extern const uint32_t docroute_epoll_out;
extern const uint32_t docroute_epoll_err;
extern const uint32_t docroute_epoll_hup;
extern const uint32_t docroute_epoll_rdhup;
extern const uint32_t docroute_epoll_oneshot;
extern const int docroute_epoll_add;
extern const int docroute_epoll_modify;
extern const int docroute_epoll_remove;

/// O_PATH (GNU): a descriptor that names a file without the right to read it.
extern const int docroute_o_path;
/// setgroups(2) for the calling thread only: the raw system call. glibc's setgroups() changes
/// every thread of the process (it broadcasts the change), which must never happen while other
/// threads serve other clients. Returns 0, or -1 with errno set.
int docroute_set_thread_groups(size_t count, const uint32_t *groups);

/// malloc_trim(0): gives freed heap memory back to the kernel. Returns 1 if any was released.
int docroute_release_free_memory(void);

/// Installs handlers for the signals a crash raises (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE,
/// SIGABRT) that write one byte to `fd` (a file docrouted opened for this) and then pass the
/// signal on to whatever handled it before (the Swift runtime's backtracer, or the default
/// action). Async-signal-safe. Returns 0, or -1 with errno set.
int docroute_install_crash_marker(int fd);

/// Gives the calling thread an alternate signal stack if it has none, so the crash marker runs
/// even when the thread overflowed its stack. Returns 0, or -1 with errno set.
int docroute_ensure_alternate_signal_stack(void);

/// What `docroute_spawn_handler` could not do in the child, reported through `failed_step`.
typedef enum {
    docroute_spawn_ok = 0,
    docroute_spawn_fork = 1,
    docroute_spawn_ambient = 2,
    docroute_spawn_groups = 3,
    docroute_spawn_gid = 4,
    docroute_spawn_bounding = 5,
    docroute_spawn_uid = 6,
    docroute_spawn_capset = 7,
    docroute_spawn_no_new_privs = 8,
    docroute_spawn_exec = 9,
    docroute_spawn_pipe = 10,
} docroute_spawn_step;

/// Starts a handler: fork, then in the child (async-signal-safe system calls only) default signal
/// dispositions and an empty signal mask, every descriptor above 2 closed, the ambient capability
/// set cleared, with `change_identity` the supplementary groups, gid and uid set (raw setresgid /
/// setresuid: only the one thread exists), the bounding set dropped (skipped, as the kernel
/// refuses it, when the caller lacks CAP_SETPCAP: it is then not root and holds nothing the child
/// could regain), the effective, permitted and inheritable sets emptied, no_new_privs set, then
/// execve. Linux only.
///
/// Returns the child's pid, or -1 with errno set and `*failed_step` saying which step failed (the
/// child reports its failure through a close-on-exec pipe and is reaped here).
int32_t docroute_spawn_handler(const char *path, char *const argv[], char *const envp[],
                               int change_identity, uint32_t uid, uint32_t gid,
                               const uint32_t *groups, size_t group_count, int *failed_step);

/// The kinds of system call the fault point counts (see fault_point.c and FaultPoint.swift).
typedef enum {
    docroute_fault_open = 1,   // open, openat, openat2
    docroute_fault_read = 2,   // pread
    docroute_fault_write = 3,  // write, pwrite
    docroute_fault_copy = 4,   // copy_file_range
    docroute_fault_sync = 5,   // fsync, fdatasync, syncfs
    docroute_fault_rename = 6, // renameat, renameat2
    docroute_fault_unlink = 7, // unlinkat (files and empty folders)
} docroute_fault_kind;

/// Nonzero when DOCROUTE_FAULT named faults to inject; set once, when the binary is loaded, before
/// any thread exists (a setting that cannot be read ends the process with exit status 2 and says
/// why on standard error). Read it through docroute_fault_is_armed().
extern int docroute_fault_armed;

/// Whether DOCROUTE_FAULT armed the fault point: one load and a branch the compiler is told is
/// rarely taken, inlined into each wrapper (Swift 6 refuses to read a mutable C global directly).
static inline int docroute_fault_is_armed(void) {
    return __builtin_expect(docroute_fault_armed != 0, 0);
}

/// Counts one call of `kind` and returns the errno it must fail with, or 0 to make the call.
/// Writes one line to standard error for each call it fails. Only call it when docroute_fault_armed.
int docroute_fault_fire(int kind);

#endif // defined(__linux__)

#endif
