/* fanout_floor: what a fan-out, or one event, costs this machine with no daemon logic at all.
 *
 *   fanout_floor --socket PATH [--event-bytes N] [--link-events [--resubscribe]]
 *
 * A stand-in for reachd in the fan-out benchmark, to measure against. It listens on PATH (a Unix
 * stream socket), answers any call with a Subscribe in it with an initial event and any other
 * call (GetStatus, the harness's readiness poll) with an empty status. It watches the kernel's
 * link notifications (RTNLGRP_LINK) as reachd does, and after a read of them that changes a
 * link's up, running or carrier flag sends one event of N bytes (NUL included; default 2048) to each subscriber, the same bytes to all, with
 * one send(2) each, MSG_DONTWAIT | MSG_NOSIGNAL, in the order they subscribed. No
 * classification, no JSON writing, no queues: the kernel's wake-up, one notification read and
 * N sends. Whatever reachd spends beyond this on an event is reachd's own.
 *
 * The event is a varlink reply `bench/fanout.c` reads as reachd's:
 *   {"continues":true,"parameters":{"event":{"padding":"xx…","sequence":SEQ}}}
 * A subscriber whose send fails (full or gone) is closed. The program exits on SIGTERM.
 *
 * --link-events makes it the latency benchmark's floor instead: it subscribes to the same
 * rtnetlink groups as reachd (links, IPv4/IPv6 addresses and routes, so it is woken by the same
 * datagrams), and its events carry what the harness reads from reachd's: every link it has seen
 * with its name, index, up and carrier, and a status ("ethernet" while a link other than lo is up
 * with carrier and a default route is there, else "notReachable"; an event whenever a link's flags
 * or the presence of a default route change), after the padding that brings the event to N bytes:
 *   {"continues":true,"parameters":{"event":{"padding":"xx…","sequence":SEQ,
 *    "event":"reachabilityChanged","reason":{"code":"linkChanged"},
 *    "current":{"status":"…","interfaces":[{"name":"…","index":I,"up":B,"carrier":B},…]}}}}
 * It learns the links from their notifications only (no dump): the harness's warm-up changes
 * introduce them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct conn { int fd; int subscribed; };

static struct conn *conns;      /* by descriptor */
static int *subscribers, subscriber_count, subscriber_cap;
static int epfd;

static void die(const char *what) { fprintf(stderr, "fanout_floor: %s: %s\n", what, strerror(errno)); exit(1); }

static void drop(int fd) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    if (conns[fd].subscribed) {
        for (int i = 0; i < subscriber_count; i++) {
            if (subscribers[i] == fd) {
                memmove(subscribers + i, subscribers + i + 1, (size_t)(subscriber_count - i - 1) * sizeof *subscribers);
                subscriber_count--;
                break;
            }
        }
    }
    conns[fd] = (struct conn){ 0 };
}

/* The event `{"continues":true,"parameters":{"event":{"padding":"xx…TAIL` in `buf`, padded so
 * that it is `size` bytes with its NUL (longer when TAIL does not leave room); its length. */
static size_t padded_event(char *buf, size_t size, const char *tail, size_t tail_len) {
    static const char head[] = "{\"continues\":true,\"parameters\":{\"event\":{\"padding\":\"";
    size_t fixed = sizeof head - 1 + tail_len + 1;
    size_t pad = size > fixed ? size - fixed : 0;
    memcpy(buf, head, sizeof head - 1);
    memset(buf + sizeof head - 1, 'x', pad);
    memcpy(buf + sizeof head - 1 + pad, tail, tail_len);
    buf[sizeof head - 1 + pad + tail_len] = '\0';
    return fixed + pad;
}

/* The event with sequence `seq`, `size` bytes with its NUL. */
static size_t event(char *buf, size_t size, long long seq) {
    char tail[64];
    int tail_len = snprintf(tail, sizeof tail, "\",\"sequence\":%lld}}}", seq);
    return padded_event(buf, size, tail, (size_t)tail_len);
}

/* Whether a datagram of notifications changes a link's up, running or carrier flag, or (route
 * notifications come only with --link-events) whether a link has a default route: the kind of
 * change reachd makes an event of (it sends none for a notification that changes nothing it
 * reports). */
static unsigned last_flags[65536];
static unsigned char seen[65536];
static unsigned highest_seen;   /* the highest index ever seen: an event walks only up to it */
static char names[65536][IFNAMSIZ];
/* --link-events: whether a link has a default route in the main table. The kernel sends no
 * RTM_DELROUTE for the IPv4 routes it flushes when a link goes down: its routes go with it. */
static unsigned char default_route[65536];
/* --resubscribe: the netlink socket leaves and rejoins its groups at each Subscribe call. The
 * kernel hands a notification to the sockets of a group newest member first, so this puts it
 * ahead of an `ip monitor` started before the subscription (reachbench.py --ip-monitor-first). */
static int resubscribe, nl = -1;
static const int groups[] = { RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE };
static void memberships(int option) {
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        if (setsockopt(nl, SOL_NETLINK, option, &groups[g], sizeof groups[g]) != 0) die("netlink membership");
}
static int link_changes(const char *buf, size_t len) {
    int changed = 0;
    for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
        if ((h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE) && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct rtmsg))) {
            const struct rtmsg *rt = NLMSG_DATA(h);
            if (rt->rtm_dst_len != 0 || rt->rtm_table != RT_TABLE_MAIN) continue;
            int attrs_len = (int)RTM_PAYLOAD(h);
            for (const struct rtattr *a = RTM_RTA(rt); RTA_OK(a, attrs_len); a = RTA_NEXT(a, attrs_len)) {
                if (a->rta_type != RTA_OIF) continue;
                unsigned oif = *(const unsigned *)RTA_DATA(a) & 0xffff;
                unsigned char now = h->nlmsg_type == RTM_NEWROUTE;
                if (default_route[oif] != now) changed = 1;
                default_route[oif] = now;
            }
            continue;
        }
        if ((h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_DELLINK) || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) continue;
        const struct ifinfomsg *ifi = NLMSG_DATA(h);
        unsigned index = (unsigned)ifi->ifi_index & 0xffff;
        unsigned flags = h->nlmsg_type == RTM_DELLINK ? 0 : ifi->ifi_flags & (IFF_UP | IFF_RUNNING | IFF_LOWER_UP);
        if (!seen[index] || last_flags[index] != flags) changed = 1;
        seen[index] = h->nlmsg_type != RTM_DELLINK;
        if (index > highest_seen) highest_seen = index;
        if (!(flags & IFF_UP)) default_route[index] = 0;
        last_flags[index] = flags;
        int attrs_len = (int)IFLA_PAYLOAD(h);
        for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, attrs_len); a = RTA_NEXT(a, attrs_len)) {
            if (a->rta_type == IFLA_IFNAME) snprintf(names[index], IFNAMSIZ, "%s", (const char *)RTA_DATA(a));
        }
    }
    return changed;
}

/* --link-events: the event with the links seen so far, padded to `size` bytes with its NUL. */
static size_t link_event(char *buf, size_t size, long long seq) {
    char body[8192];
    int up_link = 0;
    size_t n = 0;
    for (unsigned i = 0; i <= highest_seen && n < sizeof body - 256; i++) {
        if (!seen[i]) continue;
        unsigned f = last_flags[i];
        if ((f & IFF_UP) && (f & IFF_LOWER_UP) && strcmp(names[i], "lo") != 0 && default_route[i]) up_link = 1;
        n += (size_t)snprintf(body + n, sizeof body - n, "%s{\"name\":\"%s\",\"index\":%u,\"up\":%s,\"carrier\":%s}",
                              n ? "," : "", names[i], i, (f & IFF_UP) ? "true" : "false", (f & IFF_LOWER_UP) ? "true" : "false");
    }
    char tail[8192 + 256];
    int tail_len = snprintf(tail, sizeof tail,
                            "\",\"sequence\":%lld,\"event\":\"reachabilityChanged\",\"reason\":{\"code\":\"linkChanged\"},"
                            "\"current\":{\"status\":\"%s\",\"interfaces\":[%.*s]}}}}",
                            seq, up_link ? "ethernet" : "notReachable", (int)n, body);
    return padded_event(buf, size, tail, (size_t)tail_len);
}

static void answer(int fd, char *event_buf, size_t event_size) {
    char in[4096];
    ssize_t got = recv(fd, in, sizeof in - 1, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) { drop(fd); return; }
    if (got < 0) return;
    in[got] = '\0';
    /* Calls are small and come one at a time here: one read holds a whole call. */
    if (memmem(in, (size_t)got, "Subscribe", 9) && !conns[fd].subscribed) {
        size_t len = event(event_buf, event_size, 0);
        if (send(fd, event_buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) { drop(fd); return; }
        conns[fd].subscribed = 1;
        if (resubscribe) {
            memberships(NETLINK_DROP_MEMBERSHIP);
            memberships(NETLINK_ADD_MEMBERSHIP);
        }
        if (subscriber_count == subscriber_cap) {
            subscriber_cap = subscriber_cap ? 2 * subscriber_cap : 1024;
            subscribers = realloc(subscribers, (size_t)subscriber_cap * sizeof *subscribers);
        }
        subscribers[subscriber_count++] = fd;
    } else if (memchr(in, '\0', (size_t)got)) {
        static const char status[] = "{\"parameters\":{\"status\":{}}}";
        if (send(fd, status, sizeof status, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof status) drop(fd);
    }
}

int main(int argc, char **argv) {
    const char *path = NULL;
    size_t event_size = 2048;
    int link_events = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--event-bytes") && i + 1 < argc) event_size = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--link-events")) link_events = 1;
        else if (!strcmp(argv[i], "--resubscribe")) resubscribe = 1;
        else { fprintf(stderr, "usage: fanout_floor --socket PATH [--event-bytes N] [--link-events [--resubscribe]]\n"); return 2; }
    }
    if (!path || event_size < 128 || event_size > (1 << 20)) { fprintf(stderr, "usage: fanout_floor --socket PATH [--event-bytes 128..1048576]\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    conns = calloc(rl.rlim_cur, sizeof *conns);
    char *event_buf = malloc(event_size + 16384);
    if (!conns || !event_buf) die("calloc");

    nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    struct sockaddr_nl nla = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
    if (link_events)
        nla.nl_groups |= RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (nl < 0 || bind(nl, (struct sockaddr *)&nla, sizeof nla) != 0) die("netlink socket");

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    unlink(path);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 4096) != 0) die(path);

    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
    epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev);
    ev.data.fd = nl;
    epoll_ctl(epfd, EPOLL_CTL_ADD, nl, &ev);

    long long seq = 0;
    char nlbuf[32768];
    struct epoll_event ready[64];
    for (;;) {
        int n = epoll_wait(epfd, ready, 64, -1);
        if (n < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == listener) {
                int c;
                while ((c = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
                    conns[c] = (struct conn){ .fd = c };
                    struct epoll_event cev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = c };
                    epoll_ctl(epfd, EPOLL_CTL_ADD, c, &cev);
                }
            } else if (fd == nl) {
                int changed = 0;
                ssize_t got;
                while ((got = recv(nl, nlbuf, sizeof nlbuf, MSG_DONTWAIT)) > 0) changed |= link_changes(nlbuf, (size_t)got);
                if (!changed) continue;
                size_t len = link_events ? link_event(event_buf, event_size, ++seq) : event(event_buf, event_size, ++seq);
                for (int s = 0; s < subscriber_count; s++) {
                    if (send(subscribers[s], event_buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) {
                        drop(subscribers[s]);
                        s--;
                    }
                }
            } else {
                answer(fd, event_buf, event_size);
            }
        }
    }
}
