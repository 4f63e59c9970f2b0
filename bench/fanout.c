/* fanout: N reachd subscribers in one process (non-blocking sockets + epoll).
 *
 *   fanout SOCKET N
 *
 * Connects N varlink connections to SOCKET, subscribes on each and reads the initial event; then
 * prints "ready N" on stdout. From then on, for every event sequence number, once each live
 * subscriber has the complete message it prints
 *   "event SEQ FIRST LAST"
 * with the CLOCK_MONOTONIC seconds at which the first and the last subscriber had it complete.
 * A varlink error reply prints "error NAME", a closed connection "closed". It exits when stdin is
 * closed (the driver went away), so it never outlives the benchmark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static const char subscribe[] = "{\"method\":\"io.reachd.Reachability.Subscribe\",\"parameters\":{},\"more\":true}";

struct sub { int fd; char *buf; size_t len, cap; long long initial_seen; };
struct seen { long long seq; int count; double first, last; };
#define RING 1024
static struct seen ring[RING];
static int ring_next;

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct seen *slot(long long seq) {
    for (int i = 0; i < RING; i++) {
        struct seen *s = &ring[(ring_next - 1 - i + 2 * RING) % RING];
        if (s->count && s->seq == seq) return s;
    }
    struct seen *s = &ring[ring_next];
    ring_next = (ring_next + 1) % RING;
    memset(s, 0, sizeof *s);
    s->seq = seq;
    return s;
}

/* The event's "sequence" sits near the end of the message (keys are sorted): look for it from
 * the end rather than scanning the whole status twice over. */
static long long sequence_of(const char *msg, size_t len) {
    static const char key[] = "\"sequence\":";
    const size_t k = sizeof key - 1;
    for (size_t i = len >= k ? len - k + 1 : 0; i-- > 0;) {
        if (msg[i] == '"' && memcmp(msg + i, key, k) == 0) return strtoll(msg + i + k, NULL, 10);
    }
    return -1;
}

static const char event_prefix[] = "{\"continues\":true,\"parameters\":{\"event\":";

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: fanout SOCKET N\n"); return 2; }
    const char *path = argv[1];
    int n = atoi(argv[2]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)n + 16 > rl.rlim_cur) { fprintf(stderr, "fanout: RLIMIT_NOFILE %lu too low\n", (unsigned long)rl.rlim_cur); return 1; }

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct sub *subs = calloc(n, sizeof *subs);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            fprintf(stderr, "fanout: connect %s #%d: %s\n", path, i, strerror(errno)); return 1;
        }
        if (write(fd, subscribe, sizeof subscribe) != (ssize_t)sizeof subscribe) {
            fprintf(stderr, "fanout: write #%d: %s\n", i, strerror(errno)); return 1;
        }
        fcntl(fd, F_SETFL, O_NONBLOCK);
        subs[i] = (struct sub){ .fd = fd, .cap = 8192, .buf = malloc(8192), .initial_seen = 0 };
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (unsigned)i };
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    struct epoll_event in = { .events = EPOLLIN, .data.u32 = 0xffffffffu };
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &in);

    int live = n, initial = 0;
    struct epoll_event evs[512];
    for (;;) {
        int k = epoll_wait(ep, evs, 512, -1);
        if (k < 0) { if (errno == EINTR) continue; perror("epoll_wait"); return 1; }
        for (int e = 0; e < k; e++) {
            unsigned id = evs[e].data.u32;
            if (id == 0xffffffffu) return 0;   /* stdin closed or written: the driver is done */
            struct sub *s = &subs[id];
            for (;;) {
                if (s->cap - s->len < 65536) { s->cap *= 2; s->buf = realloc(s->buf, s->cap); }
                size_t room = s->cap - s->len - 1;
                ssize_t r = read(s->fd, s->buf + s->len, room);
                if (r < 0 && (errno == EAGAIN || errno == EINTR)) break;
                if (r <= 0) {
                    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
                    close(s->fd);
                    live--;
                    printf("closed %d\n", live); fflush(stdout);
                    break;
                }
                size_t start = 0;
                s->len += (size_t)r;
                for (char *nul = memchr(s->buf + s->len - (size_t)r, '\0', (size_t)r); nul;
                     nul = memchr(nul + 1, '\0', (size_t)(s->buf + s->len - nul - 1))) {
                    size_t j = (size_t)(nul - s->buf);
                    char *msg = s->buf + start;
                    size_t msg_len = j - start;
                    start = j + 1;
                    int is_event = strncmp(msg, event_prefix, sizeof event_prefix - 1) == 0;
                    if (!is_event && (strncmp(msg, "{\"error\"", 8) == 0 || (strstr(msg, "\"error\"") && !strstr(msg, "\"event\"")))) {
                        char name[128] = "?";
                        sscanf(strstr(msg, "\"error\"") + 7, " : \"%127[^\"]", name);
                        printf("error %s\n", name); fflush(stdout);
                        continue;
                    }
                    if (!s->initial_seen) {
                        s->initial_seen = 1;
                        if (++initial == n) { printf("ready %d\n", n); fflush(stdout); }
                        continue;
                    }
                    double t = mono();
                    struct seen *sl = slot(sequence_of(msg, msg_len));
                    if (sl->count++ == 0) sl->first = t;
                    sl->last = t;
                    if (sl->count == live) {
                        printf("event %lld %.9f %.9f\n", sl->seq, sl->first, sl->last); fflush(stdout);
                    }
                }
                memmove(s->buf, s->buf + start, s->len - start);
                s->len -= start;
                /* Level-triggered: a read that did not fill the buffer took all there was; what
                 * comes later wakes epoll again. Saves the read that would only say EAGAIN. */
                if ((size_t)r < room) break;
            }
        }
    }
}
