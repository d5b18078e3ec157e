/*
 * The unit tests' driver of the device core: what a guest's driver does
 * through registers, the admin queue, rings and doorbells, in the guest
 * memory of the unit tests' host (host.h).  Prefix udrv_.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_UNIT_DRIVER_H
#define TESTS_UNIT_DRIVER_H

#include "host.h"

#define UDRV_AQ_DEPTH   16
#define UDRV_AEQ_DEPTH  16

/* A ring in guest memory (level 0) and the driver's index into it */
typedef struct URing {
    uint64_t addr;
    uint32_t depth;
    uint8_t log2_elem;
    uint32_t index;             /* SQ/RQ: producer; CQ: consumer */
} URing;

typedef struct UDev {
    RdmaSimState *s;
    uint8_t addr;               /* MAC ...:<addr>, GID ::ffff:10.0.0.<addr> */
    uint64_t next;              /* guest memory not yet handed out */
    uint64_t aq, acq, aeq;
    uint32_t aq_tail;
    uint32_t acq_head;
    uint32_t aeq_head;
    uint16_t id;
    unsigned sent;              /* its frames udrv_pump() counted for losses */
} UDev;

/* An RC QP with its CQ (sends and receives) and a buffer with an MR */
typedef struct UQp {
    uint32_t qpn;
    uint32_t cqn;
    URing sq, rq, cq;
    uint64_t buf;
    uint32_t buf_len;
    uint32_t lkey, rkey;
} UQp;

void udrv_regs(UDev *d, uint64_t aq);
/* A device as a driver's probe leaves it: enabled, interrupts unmasked */
void udrv_start(UDev *d, uint8_t addr, uint64_t mem_size);
void udrv_stop(UDev *d);
uint64_t udrv_alloc(UDev *d, uint64_t size);
/* Post an admin command and take its completion: its status */
unsigned udrv_cmd(UDev *d, unsigned opcode, const void *params, size_t len,
                  struct rsim_admin_cqe *cqe);
/* Create a command's object: its handle (handle2 in *h2); asserts OK */
uint32_t udrv_create(UDev *d, unsigned opcode, const void *params,
                     size_t len, uint32_t *h2);
/* The next async event, which must be there: its type and object */
unsigned udrv_event(UDev *d, uint32_t *object);

/* A PD, CQ, RC QP and a buffer of len bytes registered with all rights */
void udrv_qp(UDev *d, UQp *qp, uint32_t len);
/* Connect a's QP to b's (both to RTS) */
void udrv_connect(UDev *a, UQp *qa, UDev *b, UQp *qb);
/* Post a receive of [off, off + len) of the QP's buffer */
void udrv_recv(UDev *d, UQp *qp, uint64_t wr_id, uint32_t off, uint32_t len);
/*
 * Post a signaled send WQE (opcode: SEND, RDMA_WRITE or RDMA_READ) of
 * [off, off + len) of the QP's buffer; remote: the peer's address, rkey
 */
void udrv_send(UDev *d, UQp *qp, uint64_t wr_id, unsigned opcode,
               uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey);
/* The next completion of the QP's CQ, if any */
bool udrv_poll(UDev *d, UQp *qp, struct rsim_cqe *cqe);
/*
 * Run both devices and carry each one's frames to the other until neither
 * sends; drop_every: lose every n-th frame each sends (0: none), counted
 * over all calls.  Returns the frames delivered.
 */
unsigned udrv_pump(UDev *a, UDev *b, unsigned drop_every);

#endif /* TESTS_UNIT_DRIVER_H */
