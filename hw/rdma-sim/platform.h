/*
 * rdma-sim: the device core's platform interface - what its code needs of
 * the program it is built into
 *
 * The C environment first: fixed-width types, glib, the byte-order
 * accessors wire formats and rings are read and written with.  Built into
 * QEMU (the default) that is QEMU's osdep.h and bswap.h, and this header
 * must be a core file's first include, as osdep.h must.  Built plain
 * (RDMA_SIM_PLAIN defined: the core's unit tests, tests/unit), it is glib
 * and the accessors below, with the same names and types as QEMU's, so a
 * file that needs nothing else of its host compiles both ways unchanged;
 * the build defines HOST_X86_64 on x86-64, as QEMU's configuration does.
 *
 * Then the host's services (DMA to and from guest memory, MSI-X, the guest
 * error log, bottom halves, frames), at the end of this header: QEMU's
 * platform.c gives them, and tests/unit/host.c built plain
 * (docs/architecture.md, "The core and its host").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_PLATFORM_H
#define HW_RDMA_SIM_PLATFORM_H

#ifndef RDMA_SIM_PLAIN

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/main-loop.h"
#include "qemu/queue.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qemu-compat.h"
#include "net/net.h"
#include "qom/object.h"

/*
 * The device as a QEMU object: its PCI function, BARs and NIC come first
 * in its state (rdma-sim.c, net.c and migration.c use them; the core does
 * not).
 */
#define TYPE_RDMA_SIM "rdma-sim"
OBJECT_DECLARE_SIMPLE_TYPE(RdmaSimState, RDMA_SIM)
#define RDMA_SIM_HOST_STATE     \
    PCIDevice parent_obj;       \
    MemoryRegion regs_mr;       \
    MemoryRegion db_mr;         \
    MemoryRegion msix_mr;       \
    NICState *nic;              \
    NICConf conf;               \
    VMChangeStateEntry *vm_state;

/* What the QEMU glue's files give one another */
extern const VMStateDescription vmstate_rdma_sim;          /* migration.c */
/* introspect-qom.c */
void rdma_sim_introspect_class_init(ObjectClass *klass);
void rdma_sim_net_init(RdmaSimState *s, Error **errp);     /* net.c */
void rdma_sim_net_cleanup(RdmaSimState *s);                 /* net.c */

#else /* RDMA_SIM_PLAIN */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

#define DIV_ROUND_UP(n, d)      (((n) + (d) - 1) / (d))
#define QEMU_BUILD_BUG_ON(x)    G_STATIC_ASSERT(!(x))

/*
 * Unaligned big- and little-endian loads and stores.  As in QEMU, the
 * 16- and 32-bit loads return int: callers mask or assign to unsigned.
 */
static inline int lduw_be_p(const void *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof(v));
    return GUINT16_FROM_BE(v);
}

static inline int ldl_be_p(const void *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return GUINT32_FROM_BE(v);
}

static inline int ldl_le_p(const void *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return GUINT32_FROM_LE(v);
}

static inline uint64_t ldq_be_p(const void *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return GUINT64_FROM_BE(v);
}

static inline void stw_be_p(void *p, uint16_t v)
{
    v = GUINT16_TO_BE(v);
    memcpy(p, &v, sizeof(v));
}

static inline void stl_be_p(void *p, uint32_t v)
{
    v = GUINT32_TO_BE(v);
    memcpy(p, &v, sizeof(v));
}

static inline void stl_le_p(void *p, uint32_t v)
{
    v = GUINT32_TO_LE(v);
    memcpy(p, &v, sizeof(v));
}

static inline void stq_be_p(void *p, uint64_t v)
{
    v = GUINT64_TO_BE(v);
    memcpy(p, &v, sizeof(v));
}

/* n bytes (1, 2, 4 or 8), as QEMU's: zero-extended to 64 bits */
static inline uint64_t ldn_le_p(const void *p, int n)
{
    uint64_t v = 0;

    g_assert(n > 0 && n <= 8);
    memcpy(&v, p, n);
    return GUINT64_FROM_LE(v);
}

static inline void stn_le_p(void *p, int n, uint64_t v)
{
    uint64_t le = GUINT64_TO_LE(v);

    memcpy(p, &le, n);
}

#define cpu_to_le16(v)          GUINT16_TO_LE(v)
#define cpu_to_le32(v)          GUINT32_TO_LE(v)
#define cpu_to_le64(v)          GUINT64_TO_LE(v)
#define le16_to_cpu(v)          GUINT16_FROM_LE(v)
#define le32_to_cpu(v)          GUINT32_FROM_LE(v)
#define le64_to_cpu(v)          GUINT64_FROM_LE(v)

#define KiB                     (INT64_C(1) << 10)
#define MiB                     (INT64_C(1) << 20)
#define GiB                     (INT64_C(1) << 30)
#define ARRAY_SIZE(a)           G_N_ELEMENTS(a)
#define ROUND_UP(n, d)          (DIV_ROUND_UP(n, d) * (d))
#define QEMU_IS_ALIGNED(n, m)   (((n) % (m)) == 0)
#define QEMU_ALIGNED(x)         __attribute__((aligned(x)))

#define sizeof_field(type, field) sizeof(((type *)0)->field)
#define container_of(ptr, type, member)                                 \
    ((type *)((char *)(ptr) - offsetof(type, member)))
/*
 * Ordering of the device's accesses to guest memory, as in QEMU: a ring's
 * index is read before its elements (acquire), elements are written
 * before the index that publishes them (release)
 */
#define smp_rmb()   __atomic_thread_fence(__ATOMIC_ACQUIRE) /* index first */
#define smp_wmb()   __atomic_thread_fence(__ATOMIC_RELEASE) /* index last */

/* a * b / c, rounded down and up, without overflow */
static inline uint64_t muldiv64(uint64_t a, uint32_t b, uint32_t c)
{
    return (unsigned __int128)a * b / c;
}

static inline uint64_t muldiv64_round_up(uint64_t a, uint32_t b, uint32_t c)
{
    return ((unsigned __int128)a * b + c - 1) / c;
}

/* value with its bits [start, start + length) replaced by field's */
static inline uint64_t deposit64(uint64_t value, int start, int length,
                                 uint64_t field)
{
    uint64_t mask = (~0ull >> (64 - length)) << start;

    return (value & ~mask) | ((field << start) & mask);
}

static inline bool is_power_of_2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static inline uint64_t pow2ceil(uint64_t v)
{
    uint64_t p = 1;

    while (p && p < v) {
        p <<= 1;
    }
    return p;
}

static inline bool buffer_is_zero(const void *buf, size_t len)
{
    const uint8_t *p = buf;

    for (size_t i = 0; i < len; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

/*
 * Register fields, spelled as QEMU's registerfields.h spells them: the
 * shared header defines REG32() and FIELD() with GENMASK(), as for Linux
 */
#define GENMASK(h, l)           ((~0u >> (31 - (h))) & (~0u << (l)))
#define FIELD_EX32(v, reg, field)                                       \
    (((uint32_t)(v) >> R_ ## reg ## _ ## field ## _SHIFT) &             \
     (~0u >> (32 - R_ ## reg ## _ ## field ## _LENGTH)))
#define FIELD_DP32(v, reg, field, val)                                  \
    (((uint32_t)(v) & ~(uint32_t)R_ ## reg ## _ ## field ## _MASK) |    \
     (((uint32_t)(val) << R_ ## reg ## _ ## field ## _SHIFT) &          \
      (uint32_t)R_ ## reg ## _ ## field ## _MASK))

/* Guest memory as the device's DMA sees it */
typedef uint64_t dma_addr_t;
typedef enum DMADirection {
    DMA_DIRECTION_TO_DEVICE = 0,
    DMA_DIRECTION_FROM_DEVICE = 1,
} DMADirection;
typedef uint32_t MemTxResult;
#define MEMTX_OK                0
#define MEMTX_ERROR             (1U << 0)
#define MEMTX_DECODE_ERROR      (1U << 1)

/*
 * Timers on the virtual clock (which stands while the VM is stopped) and
 * deferred work (a bottom half: run soon, from the main loop, once however
 * often scheduled): the unit tests' host runs both when a test says.
 */
#define SCALE_MS                1000000
#define SCALE_US                1000
#define SCALE_NS                1
typedef enum QEMUClockType {
    QEMU_CLOCK_VIRTUAL = 1,
} QEMUClockType;
typedef struct QEMUTimer QEMUTimer;
typedef void QEMUTimerCB(void *opaque);
QEMUTimer *timer_new_ns(QEMUClockType type, QEMUTimerCB *cb, void *opaque);
void timer_mod(QEMUTimer *t, int64_t expire_ns);
void timer_mod_anticipate(QEMUTimer *t, int64_t expire_ns);
void timer_del(QEMUTimer *t);
void timer_free(QEMUTimer *t);
bool timer_pending(QEMUTimer *t);
int64_t timer_expire_time_ns(QEMUTimer *t);
int64_t qemu_clock_get_ns(QEMUClockType type);
typedef struct QEMUBH QEMUBH;
typedef void QEMUBHFunc(void *opaque);
void qemu_bh_schedule(QEMUBH *bh);
void qemu_bh_cancel(QEMUBH *bh);
void qemu_bh_delete(QEMUBH *bh);

/* Lists (the tail queue of BSD's queue.h, with QEMU's names) */
#define QTAILQ_HEAD(name, type)                                         \
    struct name { struct type *first; struct type **last_next; }
#define QTAILQ_ENTRY(type)                                              \
    struct { struct type *next; struct type **prev_next; }
#define QTAILQ_INIT(head)                                               \
    do {                                                                \
        (head)->first = NULL;                                           \
        (head)->last_next = &(head)->first;                             \
    } while (0)
#define QTAILQ_EMPTY(head)      ((head)->first == NULL)
#define QTAILQ_FIRST(head)      ((head)->first)
#define QTAILQ_NEXT(elm, field) ((elm)->field.next)
#define QTAILQ_INSERT_TAIL(head, elm, field)                            \
    do {                                                                \
        (elm)->field.next = NULL;                                       \
        (elm)->field.prev_next = (head)->last_next;                     \
        *(head)->last_next = (elm);                                     \
        (head)->last_next = &(elm)->field.next;                         \
    } while (0)
#define QTAILQ_REMOVE(head, elm, field)                                 \
    do {                                                                \
        if ((elm)->field.next) {                                        \
            (elm)->field.next->field.prev_next = (elm)->field.prev_next; \
        } else {                                                        \
            (head)->last_next = (elm)->field.prev_next;                 \
        }                                                               \
        *(elm)->field.prev_next = (elm)->field.next;                    \
        (elm)->field.prev_next = NULL;                                  \
    } while (0)
#define QTAILQ_FOREACH(var, head, field)                                \
    for ((var) = (head)->first; (var); (var) = (var)->field.next)
#define QTAILQ_FOREACH_SAFE(var, head, field, next_var)                 \
    for ((var) = (head)->first;                                         \
         (var) && ((next_var) = (var)->field.next, 1);                  \
         (var) = (next_var))

/* The device's state holds no QEMU object: a pointer the host sets */
#define RDMA_SIM_HOST_STATE     \
    void *host;

#endif /* RDMA_SIM_PLAIN */

typedef struct RdmaSimState RdmaSimState;

/*
 * The host's services, which the core calls: QEMU's in platform.c, the
 * unit tests' in tests/unit/host.c.
 *
 * Report guest misbehaviour: a trace event with the details and a
 * LOG_GUEST_ERROR message; counted in the guest_errors statistic.
 */
void rdma_sim_guest_error(RdmaSimState *s, const char *what, const char *fmt,
                          ...) G_GNUC_PRINTF(3, 4);
void rdma_sim_msix_notify(RdmaSimState *s, unsigned vector);
MemTxResult rdma_sim_dma_read(RdmaSimState *s, dma_addr_t addr, void *buf,
                              dma_addr_t len);
MemTxResult rdma_sim_dma_write(RdmaSimState *s, dma_addr_t addr,
                               const void *buf, dma_addr_t len);
/*
 * Deferred work of the device: run from the main loop, never re-entrantly;
 * named after the function, as QEMU names its bottom halves
 */
QEMUBH *rdma_sim_bh_new_named(RdmaSimState *s, QEMUBHFunc *cb,
                              const char *name);
#define rdma_sim_bh_new(s, cb) rdma_sim_bh_new_named(s, cb, #cb)
/* Is the VM running?  A stopped VM's device does nothing until it runs. */
bool rdma_sim_vm_running(void);
/* Is the port's link up (the network backend's link state)? */
bool rdma_sim_link_up(RdmaSimState *s);
/* A message for the user in the guest error log, not rate-limited */
void rdma_sim_log(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Send a frame to the network (the port counts it: rdma_sim_port_send()) */
void rdma_sim_net_send(RdmaSimState *s, const uint8_t *frame, size_t len);
/* The port can take frames again: the backend hands over what it held */
void rdma_sim_net_rx_ready(RdmaSimState *s);
/* The device is reset: frames the backend holds for it are dropped */
void rdma_sim_net_reset(RdmaSimState *s);

#endif /* HW_RDMA_SIM_PLATFORM_H */
