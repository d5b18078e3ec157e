/*
 * The unit tests' host of the device core: what QEMU gives the device in
 * a VM (platform.h and its host services), given by a plain
 * program - guest memory as an array, a virtual clock a test moves,
 * bottom halves a test runs, MSI-X and frames recorded.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_UNIT_HOST_H
#define TESTS_UNIT_HOST_H

#include "platform.h"
#include "device.h"

/* Guest memory starts here; below it and past its end, DMA fails */
#define UNIT_MEM_BASE   0x100000000ull

typedef struct UnitHost {
    uint8_t *mem;
    uint64_t mem_size;
    uint64_t dma_errors;        /* DMA refused: outside memory */
    unsigned msix[RDMA_SIM_MAX_MSIX];
    unsigned guest_errors;
    bool link_down;             /* the backend's link state */
    GPtrArray *sent;            /* GByteArray: frames the port sent */
} UnitHost;

/*
 * A device with mem_size bytes of guest memory: its state and host only,
 * for tests of one file (page lists, frames)
 */
RdmaSimState *unit_dev_new(uint64_t mem_size);
void unit_dev_free(RdmaSimState *s);
/*
 * ... with the whole core (tests/unit files that link core.c and every
 * core file), small properties and MAC 52:54:00:5e:00:<addr>, as QEMU
 * realizes it: disabled, in its power-on state
 */
RdmaSimState *unit_core_new(uint64_t mem_size, uint8_t addr);
void unit_core_free(RdmaSimState *s);
/* ... enabled without an admin queue's use, GID 0 ::ffff:10.0.0.<addr> */
RdmaSimState *unit_core_ready(uint64_t mem_size, uint8_t addr);
UnitHost *unit_host(RdmaSimState *s);

/* Guest memory at guest address addr, which must hold len bytes */
void *unit_mem(RdmaSimState *s, uint64_t addr, uint64_t len);

/* The virtual clock: move it by ns, running the timers that expire */
int64_t unit_clock_ns(void);
void unit_clock_advance(int64_t ns);
/* Run the scheduled bottom halves until none is; returns how many ran */
unsigned unit_run_bhs(void);

#endif /* TESTS_UNIT_HOST_H */
