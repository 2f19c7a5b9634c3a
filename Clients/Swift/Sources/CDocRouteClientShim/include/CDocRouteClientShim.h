#ifndef CDOCROUTE_CLIENT_SHIM_H
#define CDOCROUTE_CLIENT_SHIM_H

#include <sys/types.h>

#if defined(__linux__)

/// Descriptor passing over a Unix stream socket (SCM_RIGHTS), for `open-descriptor` (PROTOCOL.md).
/// sendmsg(2) of `length` bytes with `descriptor` attached to their first byte, MSG_NOSIGNAL.
/// Returns the bytes sent, or -1 with errno set.
ssize_t docroute_client_send_with_descriptor(int socket, const void *bytes, size_t length, int descriptor);

#endif // defined(__linux__)

#endif
