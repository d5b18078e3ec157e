/*
 * rdma-sim fuzz targets: what the driver and wire targets share
 * (rdma-sim-fuzz.c)
 *
 * An input is a list of operations separated by QSIM_FUZZ_SEPARATOR; the
 * first byte of each selects what it does (enum QSimFuzzOp), the bytes
 * after it are its arguments, little-endian.  Both targets run their
 * inputs in the fuzzer's process and reset the device and guest RAM
 * after each: the driver target's next input starts from the device as
 * it was after boot, the wire target's from its world of objects, built
 * again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_FUZZ_H
#define RDMA_SIM_FUZZ_H

#include "fuzz.h"
#include "libqos/rdma-sim.h"

#define QSIM_FUZZ_SEPARATOR     "FUZZ"

typedef enum QSimFuzzOp {
    QSIM_FUZZ_READ,         /* bar, size, offset u32: read a BAR */
    QSIM_FUZZ_WRITE,        /* bar, size, offset u32, value u64 */
    QSIM_FUZZ_CFG_READ,     /* size, offset: PCI configuration space */
    QSIM_FUZZ_CFG_WRITE,    /* size, offset, value u32 */
    QSIM_FUZZ_MEM,          /* address u32, bytes: into guest RAM */
    QSIM_FUZZ_MEMSET,       /* address u32, length u32, byte */
    QSIM_FUZZ_CLOCK,        /* ns u32 (0: to the next timer) */
    QSIM_FUZZ_FRAME,        /* keep (QSIM_KEEP_*), a frame without ICRC */
    QSIM_FUZZ_OPS
} QSimFuzzOp;

/* The largest frame an input can carry (jumbo frames and more) */
#define QSIM_FUZZ_MAX_FRAME     16384

/* The device of the fuzz process, once pre_fuzz has run */
extern QSimDev *qsim_fuzz_dev;

/* The device's PCI function, MAC and network setup for the command line */
GString *qsim_fuzz_cmdline(FuzzTarget *t);
/*
 * Set up the device and the end of its wire (called by the targets'
 * pre_fuzz); frames the device sends go to rx (NULL: dropped).
 */
void qsim_fuzz_init(QTestState *qts,
                    void (*rx)(const uint8_t *frame, size_t len));
/* Run the operations of one input */
void qsim_fuzz_run(QTestState *qts, const uint8_t *data, size_t size);
/* Guest RAM zero, and from now on each page written is recorded */
void qsim_fuzz_track_ram(void);
/* The device's PCI command register and BARs, for qsim_fuzz_reset() */
void qsim_fuzz_save_config(void);
/*
 * The device reset, its command register and BARs as saved, the guest
 * RAM written since qsim_fuzz_track_ram() or the last reset zero again
 */
void qsim_fuzz_reset(QTestState *qts);

/* The wire target (rdma-sim-wire-fuzz.c): its world, and one input */
void qsim_fuzz_wire_pre_fuzz(QTestState *qts);
void qsim_fuzz_wire_fuzz(QTestState *qts, const uint8_t *data, size_t size);

/* Append one operation to an input */
void qsim_fuzz_op(GByteArray *input, QSimFuzzOp op, const void *args,
                  size_t len);
/* Write an input to dir/name */
void qsim_fuzz_save(const char *dir, const char *name,
                    const GByteArray *input);

#endif
