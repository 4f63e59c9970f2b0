#ifndef REACHD_CNETLINK_SHIM_H
#define REACHD_CNETLINK_SHIM_H
#include <linux/sched.h>
/* linux/if.h, not net/if.h: net/if.h after libnl redefines IFF_*. */
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/fib_rules.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <netlink/msg.h>
#include <netlink/errno.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/rtnl.h>

/* setns(2) is _GNU_SOURCE-only in glibc's <sched.h>; defining _GNU_SOURCE here clashes with
 * Dispatch's module, so declare it (glibc exports it either way). */
extern int setns(int fd, int nstype);
static inline int reachd_enter_netns(int fd) { return setns(fd, CLONE_NEWNET); }

#endif
