#ifndef CDOCROUTE_SYSTEMD_SHIM_H
#define CDOCROUTE_SYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#endif
