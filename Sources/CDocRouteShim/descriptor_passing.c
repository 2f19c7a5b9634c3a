#define _GNU_SOURCE
#include "CDocRouteShim.h"

#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

// CMSG_* are macros, which Swift cannot call: the control-message layout lives here.

ssize_t docroute_receive_one_descriptor(int socket, void *bytes, size_t length, int *descriptor, int *truncated) {
    struct iovec vector = { .iov_base = bytes, .iov_len = length };
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1,
        .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    *descriptor = -1;
    *truncated = 0;
    ssize_t count;
    do {
        count = recvmsg(socket, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (count < 0 && errno == EINTR);
    if (count < 0) return -1;
    if (message.msg_flags & MSG_CTRUNC) *truncated = 1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*descriptor < 0) {
                *descriptor = fd;
            } else {
                *truncated = 1;
                close(fd);
            }
        }
    }
    return count;
}

int docroute_accept_nonblocking(int listener) {
    int fd;
    do {
        fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

const int docroute_o_path = O_PATH;

#endif // defined(__linux__)
