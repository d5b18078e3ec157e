/*
 * The unit tests' host of the device core (host.h): the platform services
 * QEMU's platform.c gives the device, for a plain program.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "host.h"

struct QEMUTimer {
    QEMUTimerCB *cb;
    void *opaque;
    int64_t expire;             /* -1: not pending */
};

struct QEMUBH {
    QEMUBHFunc *cb;
    void *opaque;
    bool scheduled;
};

static int64_t clock_ns;
static GList *timers;
static GList *bhs;

RdmaSimState *unit_dev_new(uint64_t mem_size)
{
    RdmaSimState *s = g_new0(RdmaSimState, 1);
    UnitHost *h = g_new0(UnitHost, 1);

    h->mem = g_malloc0(mem_size);
    h->mem_size = mem_size;
    h->sent = g_ptr_array_new_with_free_func(
        (GDestroyNotify)g_byte_array_unref);
    s->host = h;
    s->props.msix_vectors = RDMA_SIM_MAX_MSIX;
    return s;
}

void unit_dev_free(RdmaSimState *s)
{
    UnitHost *h = s->host;

    g_ptr_array_unref(h->sent);
    g_free(h->mem);
    g_free(h);
    g_free(s);
}

UnitHost *unit_host(RdmaSimState *s)
{
    return s->host;
}

void *unit_mem(RdmaSimState *s, uint64_t addr, uint64_t len)
{
    UnitHost *h = s->host;

    g_assert_cmphex(addr, >=, UNIT_MEM_BASE);
    g_assert_cmphex(addr - UNIT_MEM_BASE + len, <=, h->mem_size);
    return h->mem + (addr - UNIT_MEM_BASE);
}

/* ---- DMA, MSI-X, logs: platform.h's host services ---- */

static MemTxResult unit_dma(RdmaSimState *s, dma_addr_t addr, void *buf,
                            dma_addr_t len, DMADirection dir)
{
    UnitHost *h = s->host;
    uint64_t off = addr - UNIT_MEM_BASE;

    if (rdma_sim_dma_refused(s, addr, len)) {
        return MEMTX_DECODE_ERROR;
    }
    if (addr < UNIT_MEM_BASE || off > h->mem_size || len > h->mem_size - off) {
        h->dma_errors++;
        return MEMTX_DECODE_ERROR;
    }
    if (dir == DMA_DIRECTION_TO_DEVICE) {
        memcpy(buf, h->mem + off, len);
    } else {
        memcpy(h->mem + off, buf, len);
    }
    return MEMTX_OK;
}

MemTxResult rdma_sim_dma_read(RdmaSimState *s, dma_addr_t addr, void *buf,
                              dma_addr_t len)
{
    return unit_dma(s, addr, buf, len, DMA_DIRECTION_TO_DEVICE);
}

MemTxResult rdma_sim_dma_write(RdmaSimState *s, dma_addr_t addr,
                               const void *buf, dma_addr_t len)
{
    return unit_dma(s, addr, (void *)buf, len, DMA_DIRECTION_FROM_DEVICE);
}

void rdma_sim_msix_notify(RdmaSimState *s, unsigned vector)
{
    UnitHost *h = s->host;

    if (vector < s->props.msix_vectors) {
        h->msix[vector]++;
    }
}

void rdma_sim_guest_error(RdmaSimState *s, const char *what, const char *fmt,
                          ...)
{
    UnitHost *h = s->host;
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    s->stats[RSIM_STAT_GUEST_ERRORS]++;
    h->guest_errors++;
    g_test_message("guest error: %s: %s", what, msg);
}

void rdma_sim_log(const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_test_message("%s", msg);
}

bool rdma_sim_vm_running(void)
{
    return true;
}

/* ---- the network: what platform.c does with QEMU's NIC ---- */

void rdma_sim_net_send(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    UnitHost *h = s->host;

    g_ptr_array_add(h->sent, g_byte_array_append(g_byte_array_new(), frame,
                                                 len));
}

void rdma_sim_net_rx_ready(RdmaSimState *s)
{
}

void rdma_sim_net_reset(RdmaSimState *s)
{
}

bool rdma_sim_link_up(RdmaSimState *s)
{
    return !unit_host(s)->link_down;
}

/* ---- the virtual clock, timers and bottom halves ---- */

int64_t qemu_clock_get_ns(QEMUClockType type)
{
    return clock_ns;
}

int64_t unit_clock_ns(void)
{
    return clock_ns;
}

QEMUTimer *timer_new_ns(QEMUClockType type, QEMUTimerCB *cb, void *opaque)
{
    QEMUTimer *t = g_new0(QEMUTimer, 1);

    t->cb = cb;
    t->opaque = opaque;
    t->expire = -1;
    timers = g_list_prepend(timers, t);
    return t;
}

void timer_mod(QEMUTimer *t, int64_t expire_ns)
{
    t->expire = MAX(expire_ns, 0);
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
}

void timer_free(QEMUTimer *t)
{
    timers = g_list_remove(timers, t);
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

/* The timer that expires first, if by the clock's time */
static QEMUTimer *unit_timer_due(void)
{
    QEMUTimer *due = NULL;

    for (GList *l = timers; l; l = l->next) {
        QEMUTimer *t = l->data;

        if (t->expire >= 0 && t->expire <= clock_ns &&
            (!due || t->expire < due->expire)) {
            due = t;
        }
    }
    return due;
}

void unit_clock_advance(int64_t ns)
{
    int64_t end = clock_ns + ns;

    for (;;) {
        QEMUTimer *next = NULL;

        for (GList *l = timers; l; l = l->next) {
            QEMUTimer *t = l->data;

            if (t->expire >= 0 && (!next || t->expire < next->expire)) {
                next = t;
            }
        }
        if (!next || next->expire > end) {
            break;
        }
        clock_ns = MAX(clock_ns, next->expire);
        while ((next = unit_timer_due())) {
            next->expire = -1;
            next->cb(next->opaque);
            unit_run_bhs();
        }
    }
    clock_ns = end;
}

QEMUBH *rdma_sim_bh_new_named(RdmaSimState *s, QEMUBHFunc *cb,
                              const char *name)
{
    QEMUBH *bh = g_new0(QEMUBH, 1);

    bh->cb = cb;
    bh->opaque = s;
    bhs = g_list_append(bhs, bh);
    return bh;
}

void qemu_bh_schedule(QEMUBH *bh)
{
    bh->scheduled = true;
}

void qemu_bh_cancel(QEMUBH *bh)
{
    bh->scheduled = false;
}

void qemu_bh_delete(QEMUBH *bh)
{
    bhs = g_list_remove(bhs, bh);
    g_free(bh);
}

unsigned unit_run_bhs(void)
{
    unsigned ran = 0;
    bool any = true;

    while (any) {
        any = false;
        for (GList *l = bhs; l; l = l->next) {
            QEMUBH *bh = l->data;

            if (bh->scheduled) {
                bh->scheduled = false;
                bh->cb(bh->opaque);
                any = true;
                /* a device that schedules itself for ever is a bug */
                g_assert_cmpuint(++ran, <, 1000000);
                break;
            }
        }
    }
    return ran;
}
