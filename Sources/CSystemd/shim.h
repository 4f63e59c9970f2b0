#ifndef REACHD_CSYSTEMD_SHIM_H
#define REACHD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>
#endif
