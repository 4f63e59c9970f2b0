/* stamp: the latency benchmark's minimal reader, one per side (reachd's subscriber socket, ip
 * monitor's standard output).
 *
 *   stamp < INPUT > RECORDS
 *
 * Blocks in read(2) on standard input; for each read that returns data it takes the
 * CLOCK_MONOTONIC time and writes one record to standard output: a line "SECONDS LENGTH", then
 * the LENGTH bytes read. It exits at end of input or on an error.
 *
 * Why a program of its own: the arrival of each side's bytes is stamped by a reader that costs
 * a few microseconds per wake-up, the same on both sides, and the harness (Python, ~40 µs per
 * wake-up) does not wake at all while a change is under way. When it woke at the first arrival,
 * the scheduler often put it on the CPU of the side still working and preempted that side, which
 * added the harness's own time to whichever of the two finished second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            /* Handed a non-blocking descriptor: wait for it instead. */
            struct pollfd p = { .fd = 0, .events = POLLIN };
            if (poll(&p, 1, -1) < 0 && errno != EINTR) return 1;
            continue;
        }
        if (n <= 0) return n == 0 ? 0 : 1;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        char head[64];
        int h = snprintf(head, sizeof head, "%lld.%09ld %zd\n", (long long)ts.tv_sec, ts.tv_nsec, n);
        struct iovec iov[2] = { { head, (size_t)h }, { buf, (size_t)n } };
        size_t want = (size_t)h + (size_t)n;
        /* Records are small and the harness drains the pipe after every change: a short write is
         * not expected, but finish it rather than corrupt the stream. */
        ssize_t w = writev(1, iov, 2);
        if (w < 0) return 1;
        size_t done = (size_t)w;
        while (done < want) {
            const char *from = done < (size_t)h ? head + done : buf + (done - (size_t)h);
            size_t left = done < (size_t)h ? (size_t)h - done : want - done;
            ssize_t more = write(1, from, left);
            if (more < 0 && errno == EINTR) continue;
            if (more <= 0) return 1;
            done += (size_t)more;
        }
    }
}
