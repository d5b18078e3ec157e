/*
 * rdma-sim-server: the device core's host outside QEMU
 *
 * The services platform.h declares, as QEMU's platform.c gives them in a
 * VM: DMA to and from guest memory (the client's DMA windows, mapped from
 * its shared memory or reached by messages), MSI-X (the client's
 * eventfds), the guest error log (-d guest_errors, rate-limited as in
 * QEMU), deferred work and timers
 * (glib sources on the main loop; the clock is the host's monotonic one:
 * a server has no VM to stop), and the port's frames (a UDP socket).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include "platform.h"
#include "host.h"
#include "trace.h"

/* The trace events --trace turned on (scripts/trace-plain.py log) */
bool rdma_sim_trace_on[G_N_ELEMENTS(RDMA_SIM_TRACE_EVENTS)];

void rdma_sim_trace_print(const char *name, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%" PRId64 " %s ", g_get_monotonic_time(), name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

bool server_trace_enable(const char *pattern)
{
    bool any = false;

    for (size_t i = 0; i < G_N_ELEMENTS(RDMA_SIM_TRACE_EVENTS); i++) {
        if (g_pattern_match_simple(pattern, RDMA_SIM_TRACE_EVENTS[i])) {
            rdma_sim_trace_on[i] = any = true;
        }
    }
    return any;
}

/*
 * A client may shrink the file under a DMA window after mapping it: a copy
 * that touches the lost pages takes SIGBUS, which ends that copy (a failed
 * transfer, as a DMA error) instead of the server.
 */
static sigjmp_buf server_dma_fault;
static volatile sig_atomic_t server_in_dma;

static void server_sigbus(int sig)
{
    if (server_in_dma) {
        siglongjmp(server_dma_fault, 1);
    }
    signal(SIGBUS, SIG_DFL);
    raise(SIGBUS);
}

void server_host_init(void)
{
    /*
     * SA_NODEFER: SIGBUS stays unblocked in the handler, so the jump out
     * of it leaves the mask as it was and the copy's sigsetjmp() need not
     * save the mask - a system call per DMA copy (measured: 6.5 per frame
     * sent under ib_write_lat, the server's most frequent call)
     */
    struct sigaction sa = { .sa_handler = server_sigbus,
                            .sa_flags = SA_NODEFER };

    sigaction(SIGBUS, &sa, NULL);
}

/*
 * DMA: [addr, addr + len) must lie in windows the client mapped, with the
 * right to read or write it: copied to or from the mapping of its shared
 * memory, or (memory it did not share) moved by DMA_READ/DMA_WRITE
 * messages.  A window may change while a message waits for its reply:
 * each piece looks its window up again.
 */
static MemTxResult server_dma(RdmaSimState *s, dma_addr_t addr, void *buf,
                              dma_addr_t len, bool write)
{
    VfuServer *v = &server_host(s)->vfu;
    uint8_t *p = buf;

    if (rdma_sim_dma_refused(s, addr, len)) {
        return MEMTX_DECODE_ERROR;
    }
    while (len) {
        const VfuDmaWindow *w = vfu_server_dma_window(v, addr);
        uint64_t off, n;

        if (!w || !(w->prot & (write ? VFU_DMA_WRITE_OK : VFU_DMA_READ_OK))) {
            trace_rdma_sim_dma_error(write ? "write" : "read", addr, len);
            return MEMTX_DECODE_ERROR;
        }
        off = addr - w->address;
        n = MIN(len, w->size - off);
        if (!w->map) {
            if (vfu_server_dma_msg(v, addr, p, n, write)) {
                trace_rdma_sim_dma_error(write ? "write" : "read", addr, n);
                return MEMTX_ERROR;
            }
        } else {
            if (sigsetjmp(server_dma_fault, 0)) {
                server_in_dma = 0;
                trace_rdma_sim_dma_error(write ? "write" : "read", addr, n);
                return MEMTX_DECODE_ERROR;
            }
            server_in_dma = 1;
            if (write) {
                memcpy(w->map + off, p, n);
            } else {
                memcpy(p, w->map + off, n);
            }
            server_in_dma = 0;
        }
        addr += n;
        p += n;
        len -= n;
    }
    return MEMTX_OK;
}

MemTxResult rdma_sim_dma_read(RdmaSimState *s, dma_addr_t addr, void *buf,
                              dma_addr_t len)
{
    return server_dma(s, addr, buf, len, false);
}

MemTxResult rdma_sim_dma_write(RdmaSimState *s, dma_addr_t addr,
                               const void *buf, dma_addr_t len)
{
    return server_dma(s, addr, (void *)buf, len, true);
}

void rdma_sim_msix_notify(RdmaSimState *s, unsigned vector)
{
    if (vector < s->props.msix_vectors) {
        trace_rdma_sim_irq(vector);
        vfu_server_msix(&server_host(s)->vfu, vector);
    }
}

void rdma_sim_guest_error(RdmaSimState *s, const char *what, const char *fmt,
                          ...)
{
    g_autofree char *text = NULL;
    va_list ap;

    va_start(ap, fmt);
    text = rdma_sim_guest_error_text(s, what, g_get_monotonic_time() /
                                     G_USEC_PER_SEC, fmt, ap);
    va_end(ap);
    if (text && server_host(s)->log_guest_errors) {
        fputs(text, stderr);
    }
}

void rdma_sim_log(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

bool rdma_sim_vm_running(void)
{
    return true;                /* no VM to stop: the server runs */
}

bool rdma_sim_link_up(RdmaSimState *s)
{
    return server_host(s)->net_fd >= 0;
}

/*
 * The port's frames: one Ethernet frame a UDP datagram, as QEMU's socket
 * netdevs carry them, to the peer or the multicast group
 */

void rdma_sim_net_send(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    ServerHost *h = server_host(s);

    if (h->net_fd >= 0) {
        sendto(h->net_fd, frame, len, MSG_DONTWAIT,
               (struct sockaddr *)&h->peer, sizeof(h->peer));
    }
}

void rdma_sim_net_rx_ready(RdmaSimState *s)
{
    /* the socket is read whenever it is readable: nothing is held back */
}

void rdma_sim_net_reset(RdmaSimState *s)
{
}

/*
 * Timers and deferred work: a glib source each, made ready at its time
 */

struct QEMUTimer {
    GSource *src;
    QEMUTimerCB *cb;
    void *opaque;
    int64_t expire;             /* ns, -1: not pending */
};

struct QEMUBH {
    GSource *src;
    QEMUBHFunc *cb;
    void *opaque;
};

static gboolean server_source_dispatch(GSource *src, GSourceFunc cb,
                                       gpointer data)
{
    return cb(data);
}

static GSourceFuncs server_source_funcs = {
    .dispatch = server_source_dispatch,
};

static GSource *server_source_new(GSourceFunc fire, void *data)
{
    GSource *src = g_source_new(&server_source_funcs, sizeof(GSource));

    g_source_set_callback(src, fire, data, NULL);
    g_source_set_ready_time(src, -1);
    g_source_attach(src, NULL);
    return src;
}

int64_t qemu_clock_get_ns(QEMUClockType type)
{
    return g_get_monotonic_time() * SCALE_US;
}

static gboolean server_timer_fire(gpointer data)
{
    QEMUTimer *t = data;

    g_source_set_ready_time(t->src, -1);
    t->expire = -1;
    t->cb(t->opaque);
    return G_SOURCE_CONTINUE;
}

QEMUTimer *timer_new_ns(QEMUClockType type, QEMUTimerCB *cb, void *opaque)
{
    QEMUTimer *t = g_new0(QEMUTimer, 1);

    t->cb = cb;
    t->opaque = opaque;
    t->expire = -1;
    t->src = server_source_new(server_timer_fire, t);
    return t;
}

void timer_mod(QEMUTimer *t, int64_t expire_ns)
{
    t->expire = MAX(expire_ns, 0);
    /* glib's ready times are microseconds: not before the nanosecond */
    g_source_set_ready_time(t->src, DIV_ROUND_UP(t->expire, SCALE_US));
}

void timer_mod_anticipate(QEMUTimer *t, int64_t expire_ns)
{
    if (t->expire < 0 || expire_ns < t->expire) {
        timer_mod(t, expire_ns);
    }
}

void timer_del(QEMUTimer *t)
{
    t->expire = -1;
    g_source_set_ready_time(t->src, -1);
}

void timer_free(QEMUTimer *t)
{
    g_source_destroy(t->src);
    g_source_unref(t->src);
    g_free(t);
}

bool timer_pending(QEMUTimer *t)
{
    return t->expire >= 0;
}

int64_t timer_expire_time_ns(QEMUTimer *t)
{
    return t->expire;
}

static gboolean server_bh_fire(gpointer data)
{
    QEMUBH *bh = data;

    g_source_set_ready_time(bh->src, -1);
    bh->cb(bh->opaque);
    return G_SOURCE_CONTINUE;
}

QEMUBH *rdma_sim_bh_new_named(RdmaSimState *s, QEMUBHFunc *cb,
                              const char *name)
{
    QEMUBH *bh = g_new0(QEMUBH, 1);

    bh->cb = cb;
    bh->opaque = s;
    bh->src = server_source_new(server_bh_fire, bh);
    g_source_set_name(bh->src, name);
    return bh;
}

void qemu_bh_schedule(QEMUBH *bh)
{
    g_source_set_ready_time(bh->src, 0);
}

void qemu_bh_cancel(QEMUBH *bh)
{
    g_source_set_ready_time(bh->src, -1);
}

void qemu_bh_delete(QEMUBH *bh)
{
    g_source_destroy(bh->src);
    g_source_unref(bh->src);
    g_free(bh);
}
