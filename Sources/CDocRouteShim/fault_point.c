#define _GNU_SOURCE
#include "CDocRouteShim.h"

#if defined(__linux__)

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The fault point behind DocRoutePlatform's system-call wrappers (FaultPoint.swift), as SQLite's
// test builds fail their Nth I/O call: DOCROUTE_FAULT names which call of which kind fails, and
// with which errno. It is read once, when the binary is loaded, so a wrapper costs one load and
// one branch on `docroute_fault_armed` while it is unset.

int docroute_fault_armed = 0;

enum { max_rules = 4 };

typedef struct {
    int kind;
    long first;      // the first call (counted from 1) of that kind that fails
    int and_later;   // every call from `first` on fails, not only that one
    int error;
    long calls;      // calls of that kind so far; updated atomically (any thread may call)
} fault_rule;

static fault_rule rules[max_rules];
static int rule_count = 0;

static const struct { const char *name; int kind; } kind_names[] = {
    {"open", docroute_fault_open},   {"read", docroute_fault_read},
    {"write", docroute_fault_write}, {"copy", docroute_fault_copy},
    {"fsync", docroute_fault_sync},  {"rename", docroute_fault_rename},
    {"unlink", docroute_fault_unlink},
};

static const struct { const char *name; int value; } errno_names[] = {
    {"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
    {"EACCES", EACCES}, {"EPERM", EPERM},   {"ENOENT", ENOENT}, {"EEXIST", EEXIST},
    {"EMFILE", EMFILE}, {"ENFILE", ENFILE}, {"ENOMEM", ENOMEM}, {"EAGAIN", EAGAIN},
    {"EINTR", EINTR},   {"EBUSY", EBUSY},   {"EXDEV", EXDEV},   {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR}, {"ELOOP", ELOOP},   {"EFBIG", EFBIG},   {"EBADF", EBADF},
    {"EINVAL", EINVAL}, {"ESTALE", ESTALE}, {"ENAMETOOLONG", ENAMETOOLONG},
};

static const char *kind_name(int kind) {
    for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
        if (kind_names[i].kind == kind) return kind_names[i].name;
    }
    return "?";
}

// Only async-signal-safe calls from here on: the message is written with write(2) to standard
// error, unbuffered, so it reaches the daemon's log even if the process is killed right after.
static void put(const char *text) {
    size_t length = strlen(text);
    while (length > 0) {
        ssize_t written = write(STDERR_FILENO, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

static void put_number(long value) {
    char digits[24];
    int at = (int)sizeof(digits) - 1;
    digits[at] = 0;
    do {
        digits[--at] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0 && at > 0);
    put(digits + at);
}

// One rule: KIND:N:ERRNO or KIND:N+:ERRNO (ERRNO a name from the table or a number).
static int parse_rule(const char *text, size_t length, fault_rule *rule) {
    char buffer[64];
    if (length == 0 || length >= sizeof(buffer)) return 0;
    memcpy(buffer, text, length);
    buffer[length] = 0;
    char *first_colon = strchr(buffer, ':');
    if (!first_colon) return 0;
    *first_colon = 0;
    char *second_colon = strchr(first_colon + 1, ':');
    if (!second_colon) return 0;
    *second_colon = 0;
    const char *kind = buffer, *count = first_colon + 1, *error = second_colon + 1;

    rule->kind = 0;
    for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
        if (strcmp(kind, kind_names[i].name) == 0) rule->kind = kind_names[i].kind;
    }
    if (rule->kind == 0) return 0;

    char *end = NULL;
    long first = strtol(count, &end, 10);
    if (end == count || first < 1) return 0;
    rule->and_later = 0;
    if (*end == '+') {
        rule->and_later = 1;
        end++;
    }
    if (*end != 0) return 0;
    rule->first = first;

    rule->error = 0;
    for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
        if (strcmp(error, errno_names[i].name) == 0) rule->error = errno_names[i].value;
    }
    if (rule->error == 0) {
        long number = strtol(error, &end, 10);
        if (end == error || *end != 0 || number < 1 || number > 4095) return 0;
        rule->error = (int)number;
    }
    rule->calls = 0;
    return 1;
}

// Runs when the binary is loaded, before main and before any thread exists. A setting that
// cannot be read stops the process: a test whose fault silently never fires would pass for the
// wrong reason.
__attribute__((constructor)) static void docroute_fault_read_environment(void) {
    const char *setting = getenv("DOCROUTE_FAULT");
    if (setting == NULL || *setting == 0) return;
    const char *at = setting;
    while (*at) {
        const char *comma = strchr(at, ',');
        size_t length = comma ? (size_t)(comma - at) : strlen(at);
        if (rule_count == max_rules || !parse_rule(at, length, &rules[rule_count])) {
            put("DOCROUTE_FAULT: cannot read \"");
            put(setting);
            put("\"; expected KIND:N:ERRNO or KIND:N+:ERRNO (KIND open, read, write, copy, fsync, "
                "rename or unlink; ERRNO such as EIO or ENOSPC), at most 4, separated by commas\n");
            _exit(2);
        }
        rule_count++;
        at = comma ? comma + 1 : at + length;
    }
    docroute_fault_armed = 1;
}

int docroute_fault_fire(int kind) {
    for (int i = 0; i < rule_count; i++) {
        fault_rule *rule = &rules[i];
        if (rule->kind != kind) continue;
        long call = __atomic_add_fetch(&rule->calls, 1, __ATOMIC_RELAXED);
        if (call == rule->first || (rule->and_later && call > rule->first)) {
            put("DOCROUTE_FAULT: ");
            put(kind_name(kind));
            put(" call ");
            put_number(call);
            put(" failed with errno ");
            put_number(rule->error);
            put("\n");
            return rule->error;
        }
    }
    return 0;
}

#endif // defined(__linux__)
