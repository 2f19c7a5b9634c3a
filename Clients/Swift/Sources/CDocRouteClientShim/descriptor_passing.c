#define _GNU_SOURCE
#include "CDocRouteClientShim.h"

#if defined(__linux__)
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

// CMSG_* are macros, which Swift cannot call: the control-message layout lives here.

ssize_t docroute_client_send_with_descriptor(int socket, const void *bytes, size_t length, int descriptor) {
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = length };
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1,
        .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent;
}

#endif // defined(__linux__)
