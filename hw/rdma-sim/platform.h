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
 * The host's services (DMA to and from guest memory, MSI-X, the guest
 * error log) are rdma-sim.h's platform.c section, as QEMU gives them; the
 * files that use them are not plain C yet (docs/architecture.md, "The
 * platform interface").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_PLATFORM_H
#define HW_RDMA_SIM_PLATFORM_H

#ifndef RDMA_SIM_PLAIN

#include "qemu/osdep.h"
#include "qemu/bswap.h"

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

#endif /* RDMA_SIM_PLAIN */

#endif /* HW_RDMA_SIM_PLATFORM_H */
