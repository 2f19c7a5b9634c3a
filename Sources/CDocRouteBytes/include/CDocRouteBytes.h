#ifndef CDOCROUTE_BYTES_H
#define CDOCROUTE_BYTES_H

#include <stddef.h>
#include <string.h>

// The C library's byte searches for the pure-logic targets (content typing, the mail parser),
// which import neither the C library nor DocRoutePlatform: no system call, only the vectorised
// memchr and memcmp, which a loop in Swift does not match (typing was measured 18% slower and
// long-line mail parsing 2.2 times slower without them). Static inline, so a call compiles to
// the C library's own.

/// memchr(3): the first `byte` among `count` bytes from `bytes`, or NULL when there is none.
static inline const void *_Nullable docroute_find_byte(const void *_Nonnull bytes, int byte, size_t count) {
    return memchr(bytes, byte, count);
}

/// memcmp(3): whether the `count` bytes at `left` and at `right` are the same (0), or which
/// sorts first (less or more than 0).
static inline int docroute_compare_bytes(const void *_Nonnull left, const void *_Nonnull right, size_t count) {
    return memcmp(left, right, count);
}

#endif
