/* fanout: N reachd subscribers in one process (io_uring, Linux 6.1 or later).
 *
 *   fanout SOCKET N
 *
 * Connects N varlink connections to SOCKET, subscribes on each and reads the initial event; then
 * prints "ready N" on stdout. From then on, for every event sequence number, once each live
 * subscriber has the complete message it prints
 *   "event SEQ FIRST LAST BYTES"
 * with the CLOCK_MONOTONIC seconds at which the first and the last subscriber had it complete.
 * A varlink error reply prints "error NAME", a closed connection "closed". It exits when stdin is
 * closed (the driver went away), so it never outlives the benchmark. A fifth field, BYTES, is the
 * size of that event's message (NUL included) as the first subscriber had it.
 *
 * Why io_uring: with 5,000 connections the reader's own CPU is most of what the machine does
 * per event. A multishot receive per connection stays armed, so a message costs one completion
 * instead of an epoll report, a re-poll of the socket and a read(2) of its own; the completions
 * are reaped in batches. The kernel copies each message into a buffer of a shared pool; the
 * reader stamps it when it takes that completion, which is when it has the complete message.
 * Completions are posted only while the reader waits for them (IORING_SETUP_DEFER_TASKRUN), so
 * the kernel's receive work happens in the reader's own time, as a read(2) would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char subscribe[] = "{\"method\":\"io.reachd.Reachability.Subscribe\",\"parameters\":{},\"more\":true}";

struct sub { int fd; int alive; char *buf; size_t len, cap; int initial_seen; };
struct seen { long long seq; int count; double first, last; size_t bytes; };
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

static struct sub *subs;
static int n, live, initial;

/* One complete message (without its NUL) of subscriber s. */
static void message(struct sub *s, const char *msg, size_t msg_len) {
    int is_event = msg_len >= sizeof event_prefix - 1 && memcmp(msg, event_prefix, sizeof event_prefix - 1) == 0;
    if (!is_event && (strncmp(msg, "{\"error\"", 8) == 0 || (memmem(msg, msg_len, "\"error\"", 7) && !memmem(msg, msg_len, "\"event\"", 7)))) {
        char name[128] = "?";
        const char *e = memmem(msg, msg_len, "\"error\"", 7);
        sscanf(e + 7, " : \"%127[^\"]", name);
        printf("error %s\n", name); fflush(stdout);
        return;
    }
    if (!s->initial_seen) {
        s->initial_seen = 1;
        if (++initial == n) { printf("ready %d\n", n); fflush(stdout); }
        return;
    }
    double t = mono();
    struct seen *sl = slot(sequence_of(msg, msg_len));
    if (sl->count++ == 0) { sl->first = t; sl->bytes = msg_len + 1; }
    sl->last = t;
    if (sl->count == live) {
        printf("event %lld %.9f %.9f %zu\n", sl->seq, sl->first, sl->last, sl->bytes); fflush(stdout);
    }
}

/* Bytes received by subscriber s: whole messages are handled where they lie, a partial one is
 * kept in the subscriber's own buffer until its NUL arrives. */
static void received(struct sub *s, const char *data, size_t len) {
    size_t start = 0;
    if (s->len) {
        const char *nul = memchr(data, '\0', len);
        size_t take = nul ? (size_t)(nul - data) + 1 : len;
        if (s->len + take > s->cap) { while (s->len + take > s->cap) s->cap *= 2; s->buf = realloc(s->buf, s->cap); }
        memcpy(s->buf + s->len, data, take);
        s->len += take;
        if (!nul) return;
        message(s, s->buf, s->len - 1);
        s->len = 0;
        start = take;
    }
    while (start < len) {
        const char *nul = memchr(data + start, '\0', len - start);
        if (!nul) {
            size_t rest = len - start;
            if (rest > s->cap) { while (rest > s->cap) s->cap *= 2; s->buf = realloc(s->buf, s->cap); }
            memcpy(s->buf, data + start, rest);
            s->len = rest;
            return;
        }
        size_t end = (size_t)(nul - data);
        message(s, data + start, end - start);
        start = end + 1;
    }
}

/* The ring, by raw system calls (no liburing needed). */
static int ring_fd;
static unsigned *sq_head, *sq_tail, sq_mask, *sq_array;
static struct io_uring_sqe *sqes;
static unsigned *cq_head, *cq_tail, cq_mask;
static struct io_uring_cqe *cqes;
static unsigned pending;   /* SQEs written, not yet submitted */

#define BUF_GROUP 0
#define BUF_COUNT 8192     /* power of two */
#define BUF_SIZE 4096
static struct io_uring_buf_ring *bufring;
static char *bufs;
static unsigned short buf_tail;

static void die(const char *what) { fprintf(stderr, "fanout: %s: %s\n", what, strerror(errno)); exit(1); }

static int enter(unsigned submit, unsigned wait, unsigned flags) {
    for (;;) {
        int r = (int)syscall(__NR_io_uring_enter, ring_fd, submit, wait, flags, NULL, 0);
        if (r >= 0 || errno != EINTR) return r;
    }
}

static struct io_uring_sqe *sqe(void) {
    unsigned tail = *sq_tail;
    if (tail - __atomic_load_n(sq_head, __ATOMIC_ACQUIRE) > sq_mask) {
        if (enter(pending, 0, 0) < 0) die("io_uring_enter");
        pending = 0;
    }
    struct io_uring_sqe *e = &sqes[tail & sq_mask];
    memset(e, 0, sizeof *e);
    sq_array[tail & sq_mask] = tail & sq_mask;
    __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
    pending++;
    return e;
}

static void arm_receive(int id) {
    struct io_uring_sqe *e = sqe();
    e->opcode = IORING_OP_RECV;
    e->fd = subs[id].fd;
    e->ioprio = IORING_RECV_MULTISHOT;
    e->flags = IOSQE_BUFFER_SELECT;
    e->buf_group = BUF_GROUP;
    e->user_data = (uint64_t)id;
}

static void give_buffer(unsigned short bid) {
    struct io_uring_buf *b = &bufring->bufs[buf_tail & (BUF_COUNT - 1)];
    b->addr = (uint64_t)(uintptr_t)(bufs + (size_t)bid * BUF_SIZE);
    b->len = BUF_SIZE;
    b->bid = bid;
    buf_tail++;
}

static void publish_buffers(void) { __atomic_store_n(&bufring->tail, buf_tail, __ATOMIC_RELEASE); }

#define STDIN_ID 0xffffffffu

static void setup_ring(unsigned entries) {
    struct io_uring_params p = { 0 };
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = 65536;
    ring_fd = (int)syscall(__NR_io_uring_setup, entries, &p);
    if (ring_fd < 0) die("io_uring_setup (multishot receive, DEFER_TASKRUN: Linux 6.1 or later; io_uring not disabled by kernel.io_uring_disabled or a seccomp filter)");
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_CQ_RING);
    sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) die("mmap of the ring");
    sq_head = (unsigned *)(sq + p.sq_off.head);
    sq_tail = (unsigned *)(sq + p.sq_off.tail);
    sq_mask = *(unsigned *)(sq + p.sq_off.ring_mask);
    sq_array = (unsigned *)(sq + p.sq_off.array);
    cq_head = (unsigned *)(cq + p.cq_off.head);
    cq_tail = (unsigned *)(cq + p.cq_off.tail);
    cq_mask = *(unsigned *)(cq + p.cq_off.ring_mask);
    cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);

    bufring = mmap(NULL, BUF_COUNT * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    bufs = mmap(NULL, (size_t)BUF_COUNT * BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (bufring == MAP_FAILED || bufs == MAP_FAILED) die("mmap of the buffers");
    struct io_uring_buf_reg reg = { .ring_addr = (uint64_t)(uintptr_t)bufring, .ring_entries = BUF_COUNT, .bgid = BUF_GROUP };
    if (syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_PBUF_RING, &reg, 1) != 0) die("IORING_REGISTER_PBUF_RING");
    for (unsigned i = 0; i < BUF_COUNT; i++) give_buffer((unsigned short)i);
    publish_buffers();
}

static void watch_stdin(void) {
    struct io_uring_sqe *e = sqe();
    e->opcode = IORING_OP_POLL_ADD;
    e->fd = 0;
    e->poll32_events = POLLIN | POLLHUP;
    e->user_data = STDIN_ID;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: fanout SOCKET N\n"); return 2; }
    const char *path = argv[1];
    n = atoi(argv[2]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)n + 16 > rl.rlim_cur) { fprintf(stderr, "fanout: RLIMIT_NOFILE %lu too low\n", (unsigned long)rl.rlim_cur); return 1; }

    unsigned entries = 64;
    while (entries < (unsigned)n + 1 && entries < 32768) entries *= 2;
    setup_ring(entries);

    subs = calloc((size_t)n, sizeof *subs);
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
        subs[i] = (struct sub){ .fd = fd, .alive = 1, .cap = 8192, .buf = malloc(8192) };
        arm_receive(i);
    }
    watch_stdin();
    live = n;

    for (;;) {
        if (enter(pending, 1, IORING_ENTER_GETEVENTS) < 0) die("io_uring_enter");
        pending = 0;
        unsigned head = *cq_head, tail = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);
        int returned = 0;
        for (; head != tail; head++) {
            struct io_uring_cqe *c = &cqes[head & cq_mask];
            if (c->user_data == STDIN_ID) return 0;   /* stdin closed or written: the driver is done */
            struct sub *s = &subs[c->user_data];
            int res = c->res;
            unsigned flags = c->flags;
            if (flags & IORING_CQE_F_BUFFER) {
                unsigned short bid = (unsigned short)(flags >> IORING_CQE_BUFFER_SHIFT);
                if (res > 0) received(s, bufs + (size_t)bid * BUF_SIZE, (size_t)res);
                give_buffer(bid);
                returned = 1;
            }
            if (!s->alive) continue;
            if (res == 0 || (res < 0 && res != -ENOBUFS)) {
                s->alive = 0;
                close(s->fd);
                live--;
                printf("closed %d\n", live); fflush(stdout);
                continue;
            }
            /* A multishot receive that ended (the pool ran dry, or the kernel stopped it) is
             * armed again; while it is on, nothing more is needed per message. */
            if (!(flags & IORING_CQE_F_MORE)) arm_receive((int)c->user_data);
        }
        __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
        if (returned) publish_buffers();
    }
}
