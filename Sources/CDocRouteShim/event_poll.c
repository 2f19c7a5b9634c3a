#define _GNU_SOURCE
#include "CDocRouteShim.h"

#if defined(__linux__)
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

// struct epoll_event is packed on x86-64; the layout stays on this side and Swift sees plain arrays.

int docroute_epoll_open(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int docroute_epoll_control(int epoll, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epoll, operation, fd, &event);
}

int docroute_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout_milliseconds) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count;
    do {
        count = epoll_wait(epoll, ready, capacity, timeout_milliseconds);
    } while (count < 0 && errno == EINTR);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

const uint32_t docroute_epoll_in = EPOLLIN;
const uint32_t docroute_epoll_out = EPOLLOUT;
const uint32_t docroute_epoll_err = EPOLLERR;
const uint32_t docroute_epoll_hup = EPOLLHUP;
const uint32_t docroute_epoll_rdhup = EPOLLRDHUP;
const uint32_t docroute_epoll_oneshot = EPOLLONESHOT;
const int docroute_epoll_add = EPOLL_CTL_ADD;
const int docroute_epoll_modify = EPOLL_CTL_MOD;
const int docroute_epoll_remove = EPOLL_CTL_DEL;

int docroute_eventfd_open(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int docroute_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written;
    do {
        written = write(fd, &one, sizeof one);
    } while (written < 0 && errno == EINTR);
    return written == sizeof one ? 0 : -1;
}

int docroute_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t got;
    do {
        got = read(fd, &value, sizeof value);
    } while (got < 0 && errno == EINTR);
    return got == sizeof value ? 0 : -1;
}

#endif // defined(__linux__)
