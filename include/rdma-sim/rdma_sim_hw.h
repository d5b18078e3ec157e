/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * rdma-sim hardware definitions: the single source of truth shared by the
 * QEMU device model (hw/rdma-sim), the Linux guest driver (guest-driver/)
 * and the register-level tests (tests/qtest).
 *
 * Everything here describes what a driver sees: PCI identity, BAR layout,
 * registers and their fields, admin commands and completions, event queue
 * entries, the page-list (PBL) format and the work/completion queue element
 * formats.  docs/datasheet.md explains the semantics.
 *
 * All multi-byte fields in guest memory and in registers are little-endian,
 * except where a field is marked "big-endian" (wire values such as
 * immediate data, which travel untouched).
 *
 * The queue element formats mirror the public Soft-RoCE user ABI
 * (<rdma/rdma_user_rxe.h>, <rdma/ib_user_verbs.h>) byte for byte, so that the
 * stock rdma-core "rxe" provider can drive the device from user space.  The
 * guest driver checks that equality at compile time.
 */
#ifndef RDMA_SIM_HW_H
#define RDMA_SIM_HW_H

#ifdef QEMU_OSDEP_H             /* QEMU: the device model and the qtests */
/*
 * REG32() and FIELD() are QEMU's registerfields.h, which 11.0 moved to
 * hw/core/: hw/rdma-sim/qemu-compat.h and tests/qtest/libqos/rdma-sim.h
 * include it from where their QEMU has it, before this header.
 */
#ifndef REG32
#error "include QEMU's registerfields.h first, as qemu-compat.h does"
#endif
typedef uint16_t rsim_le16;
typedef uint32_t rsim_le32;
typedef uint64_t rsim_le64;
#else
#ifdef RDMA_SIM_PLAIN           /* the device core without QEMU: platform.h */
typedef uint16_t rsim_le16;
typedef uint32_t rsim_le32;
typedef uint64_t rsim_le64;
#else                           /* the Linux kernel: the guest driver */
#include <linux/types.h>
#include <linux/bits.h>
typedef __le16 rsim_le16;
typedef __le32 rsim_le32;
typedef __le64 rsim_le64;
#endif
/* The same spelling as QEMU's hw/registerfields.h, for the other sides. */
#define REG32(reg, addr) enum { A_ ## reg = (addr) };
#define FIELD(reg, field, shift, length)                                   \
    enum {                                                                 \
        R_ ## reg ## _ ## field ## _SHIFT = (shift),                       \
        R_ ## reg ## _ ## field ## _LENGTH = (length),                     \
        R_ ## reg ## _ ## field ## _MASK =                                 \
            GENMASK((shift) + (length) - 1, (shift))                       \
    };
#endif

/*
 * PCI identity and BARs
 */

/*
 * 0x1b36 is the vendor ID Red Hat donated to QEMU for emulated devices;
 * rdma-sim uses a device ID outside the range QEMU has allocated so far.
 */
#define RSIM_PCI_VENDOR_ID          0x1b36
#define RSIM_PCI_DEVICE_ID          0x0120
#define RSIM_PCI_SUBSYS_VENDOR_ID   0x1b36
#define RSIM_PCI_SUBSYS_ID          0x0001
#define RSIM_PCI_REVISION           0x01
/* Network controller / Ethernet: a RoCE NIC presents an Ethernet port. */
#define RSIM_PCI_CLASS              0x0200

#define RSIM_BAR_REGS               0       /* 4 KiB of registers */
#define RSIM_BAR_DOORBELL           2       /* db-pages x 4 KiB */
#define RSIM_BAR_MSIX               4       /* MSI-X table and PBA */

#define RSIM_REGS_SIZE              0x1000
#define RSIM_DB_PAGE_SIZE           0x1000

/* Interface version: major in bits 31:16, minor in 15:0. */
#define RSIM_VERSION_MAJOR          1
#define RSIM_VERSION_MINOR          0

/* MSI-X vector 0 serves the admin completion queue and the async EQ. */
#define RSIM_MSIX_VECTOR_ADMIN      0

/*
 * BAR0 registers (all 32-bit, naturally aligned accesses only)
 */

/* Identification and device control */
REG32(RSIM_VERSION, 0x000)
    FIELD(RSIM_VERSION, MINOR, 0, 16)
    FIELD(RSIM_VERSION, MAJOR, 16, 16)
REG32(RSIM_FEATURES, 0x004)
    FIELD(RSIM_FEATURES, RC, 0, 1)
    FIELD(RSIM_FEATURES, UC, 1, 1)
    FIELD(RSIM_FEATURES, UD, 2, 1)
    FIELD(RSIM_FEATURES, SRQ, 3, 1)
    FIELD(RSIM_FEATURES, ATOMIC, 4, 1)
    FIELD(RSIM_FEATURES, FAST_REG, 5, 1)
    FIELD(RSIM_FEATURES, IPV6, 6, 1)
    FIELD(RSIM_FEATURES, LOOPBACK, 7, 1)
    FIELD(RSIM_FEATURES, ETH, 8, 1)
REG32(RSIM_DMA_WIDTH, 0x008)            /* DMA address bits (64) */
REG32(RSIM_DEV_CTRL, 0x010)
    FIELD(RSIM_DEV_CTRL, ENABLE, 0, 1)  /* RW: admin queues live */
    FIELD(RSIM_DEV_CTRL, RESET, 1, 1)   /* W1: reset, reads as 0 */
REG32(RSIM_DEV_STATUS, 0x014)
    FIELD(RSIM_DEV_STATUS, READY, 0, 1)
    FIELD(RSIM_DEV_STATUS, FATAL, 1, 1)
    FIELD(RSIM_DEV_STATUS, AEQ_OVERFLOW, 2, 1)
    FIELD(RSIM_DEV_STATUS, FATAL_REASON, 8, 8)
REG32(RSIM_ADMIN_TIMEOUT, 0x018)        /* ms a command may take */
REG32(RSIM_RESET_TIMEOUT, 0x01c)        /* ms a reset may take */
/*
 * What ADMIN_TIMEOUT and RESET_TIMEOUT read.  A driver takes 0 or more than
 * RSIM_TIMEOUT_MAX_MS for a broken register and uses these values instead.
 */
#define RSIM_ADMIN_TIMEOUT_MS       5000
#define RSIM_RESET_TIMEOUT_MS       1000
#define RSIM_TIMEOUT_MAX_MS         60000
REG32(RSIM_INTR_MASK, 0x020)            /* RW: 1 = cause masked */
    FIELD(RSIM_INTR_MASK, ADMIN, 0, 1)
    FIELD(RSIM_INTR_MASK, ASYNC, 1, 1)
REG32(RSIM_DB_PAGES, 0x024)             /* pages in the doorbell BAR */
REG32(RSIM_MSIX_VECTORS, 0x028)
REG32(RSIM_NUM_PORTS, 0x02c)            /* always 1 */

/* Capabilities: read-only limits, set by device properties */
REG32(RSIM_CAP_MAX_QP, 0x040)
REG32(RSIM_CAP_MAX_CQ, 0x044)
REG32(RSIM_CAP_MAX_SRQ, 0x048)
REG32(RSIM_CAP_MAX_MR, 0x04c)
REG32(RSIM_CAP_MAX_PD, 0x050)
REG32(RSIM_CAP_MAX_AH, 0x054)
REG32(RSIM_CAP_MAX_GID, 0x058)
REG32(RSIM_CAP_MAX_SEND_SGE, 0x05c)
REG32(RSIM_CAP_MAX_RECV_SGE, 0x060)
REG32(RSIM_CAP_MAX_SRQ_SGE, 0x064)
REG32(RSIM_CAP_MAX_QP_WR, 0x068)
REG32(RSIM_CAP_MAX_CQE, 0x06c)
REG32(RSIM_CAP_MAX_SRQ_WR, 0x070)
REG32(RSIM_CAP_MAX_INLINE, 0x074)
REG32(RSIM_CAP_MAX_MR_SIZE_LO, 0x078)
REG32(RSIM_CAP_MAX_MR_SIZE_HI, 0x07c)
REG32(RSIM_CAP_PAGE_SIZES, 0x080)       /* bit n set: 2^n-byte pages ok */
REG32(RSIM_CAP_MTU, 0x084)
    FIELD(RSIM_CAP_MTU, MAX_PATH_MTU, 0, 8) /* enum rsim_mtu */
REG32(RSIM_CAP_MAX_RD_ATOM, 0x088)      /* responder resources per QP */
REG32(RSIM_CAP_MAX_INIT_RD_ATOM, 0x08c) /* outstanding reads per QP */
REG32(RSIM_CAP_MAX_EQ, 0x090)
REG32(RSIM_CAP_MAX_EQE, 0x094)
REG32(RSIM_CAP_MAX_PBL_L1, 0x098)       /* entries in a level-1 list */
REG32(RSIM_CAP_MAX_PBL_ROOT, 0x09c)     /* entries in a level-2 root */
REG32(RSIM_CAP_MAX_FAST_REG_PAGES, 0x0a0)
REG32(RSIM_CAP_MAX_AQ_DEPTH, 0x0a4)
REG32(RSIM_CAP_MAX_ETH_DEPTH, 0x0a8)
REG32(RSIM_CAP_MAX_PKEYS, 0x0ac)        /* always 1 (0xffff) */

/* Admin queue (commands, driver -> device) */
REG32(RSIM_AQ_BASE_LO, 0x100)
REG32(RSIM_AQ_BASE_HI, 0x104)
REG32(RSIM_AQ_DEPTH, 0x108)             /* entries, power of two */
REG32(RSIM_AQ_TAIL, 0x10c)              /* W: producer index */
REG32(RSIM_AQ_HEAD, 0x110)              /* R: next entry the device reads */

/* Admin completion queue (device -> driver) */
REG32(RSIM_ACQ_BASE_LO, 0x120)
REG32(RSIM_ACQ_BASE_HI, 0x124)
REG32(RSIM_ACQ_DEPTH, 0x128)            /* entries, power of two */
REG32(RSIM_ACQ_HEAD, 0x12c)             /* W: consumer index */
REG32(RSIM_ACQ_TAIL, 0x130)             /* R: next entry the device writes */

/* Async event queue (device -> driver) */
REG32(RSIM_AEQ_BASE_LO, 0x140)
REG32(RSIM_AEQ_BASE_HI, 0x144)
REG32(RSIM_AEQ_DEPTH, 0x148)            /* entries, power of two */
REG32(RSIM_AEQ_HEAD, 0x14c)             /* W: consumer index */
REG32(RSIM_AEQ_TAIL, 0x150)             /* R: next entry the device writes */

/* Completion event queue doorbell: consumer index and re-arm */
REG32(RSIM_EQ_DB, 0x160)
    FIELD(RSIM_EQ_DB, CONS, 0, 16)      /* consumer index mod depth */
    FIELD(RSIM_EQ_DB, EQN, 16, 12)
    FIELD(RSIM_EQ_DB, ARM, 31, 1)       /* interrupt on the next entry */

/* Ethernet rings of the port's net device */
REG32(RSIM_ETH_TX_DB, 0x170)
    FIELD(RSIM_ETH_TX_DB, PROD, 0, 16)  /* producer index mod depth */
    FIELD(RSIM_ETH_TX_DB, ARM, 31, 1)   /* event on the next completion */
REG32(RSIM_ETH_RX_DB, 0x174)
    FIELD(RSIM_ETH_RX_DB, PROD, 0, 16)
    FIELD(RSIM_ETH_RX_DB, ARM, 31, 1)

/* DEV_STATUS.FATAL_REASON values */
enum rsim_fatal_reason {
    RSIM_FATAL_NONE = 0,
    RSIM_FATAL_BAD_ADMIN_CONFIG = 1, /* ENABLE with bad queue registers */
    RSIM_FATAL_ADMIN_DMA = 2,        /* command or completion DMA failed */
    RSIM_FATAL_AEQ_DMA = 3,          /* async event DMA failed */
    RSIM_FATAL_EQ_DMA = 4,           /* completion event DMA failed */
};

/*
 * Doorbell BAR: RSIM_DB_PAGES pages of 4 KiB.  Page 0 belongs to the kernel
 * driver and may ring any object; page n > 0 may only ring objects created
 * with db_page == n (for user contexts).
 */
REG32(RSIM_DB_SQ, 0x000)                /* W: QPN whose SQ has new WQEs */
REG32(RSIM_DB_RQ, 0x004)                /* W: QPN whose RQ has new WQEs */
REG32(RSIM_DB_SRQ, 0x008)               /* W: SRQ number */
REG32(RSIM_DB_CQ, 0x00c)                /* W: arm a CQ */
    FIELD(RSIM_DB_CQ, CQN, 0, 24)
    FIELD(RSIM_DB_CQ, ARM, 24, 2)       /* enum rsim_cq_arm */

enum rsim_cq_arm {
    RSIM_CQ_ARM_NONE = 0,
    RSIM_CQ_ARM_NEXT = 1,            /* event on the next completion */
    RSIM_CQ_ARM_SOLICITED = 2,       /* ... on the next solicited one */
};

/*
 * Admin queue: 64-byte commands, 64-byte completions.
 *
 * Command dword 0: opcode [7:0], flags [15:8] (reserved, 0), command id
 * [31:16].  The driver writes the command into slot (tail mod depth) and
 * then the new tail into AQ_TAIL.
 *
 * Completion dword 0: command id [15:0], status [23:16], phase [31];
 * dword 1: the AQ head after this command [15:0].  The device writes dwords
 * 1..15 first and dword 0 last.  The phase bit of the first pass through the
 * ring is 1 and flips on every wrap; the queue memory starts zeroed.
 */
#define RSIM_AQ_ENTRY_SIZE          64
/*
 * Every queue the device reads or writes as one contiguous buffer (AQ,
 * ACQ, AEQ, EQs, level-0 rings) starts on this boundary.
 */
#define RSIM_QUEUE_ALIGN            64
#define RSIM_ACQ_ENTRY_SIZE         64
#define RSIM_EQ_ENTRY_SIZE          16
#define RSIM_ETH_DESC_SIZE          16

enum rsim_admin_opcode {
    RSIM_CMD_NOP = 0x00,
    RSIM_CMD_QUERY_DEVICE = 0x01,
    RSIM_CMD_QUERY_PORT = 0x02,
    RSIM_CMD_SET_PORT = 0x03,
    RSIM_CMD_QUERY_STATS = 0x04,
    RSIM_CMD_CREATE_EQ = 0x08,
    RSIM_CMD_DESTROY_EQ = 0x09,
    RSIM_CMD_CREATE_ETHQ = 0x0a,
    RSIM_CMD_DESTROY_ETHQ = 0x0b,
    RSIM_CMD_ALLOC_PD = 0x10,
    RSIM_CMD_DEALLOC_PD = 0x11,
    RSIM_CMD_CREATE_CQ = 0x18,
    RSIM_CMD_RESIZE_CQ = 0x19,
    RSIM_CMD_DESTROY_CQ = 0x1a,
    RSIM_CMD_ARM_CQ = 0x1b,
    RSIM_CMD_CREATE_QP = 0x20,
    RSIM_CMD_MODIFY_QP = 0x21,
    RSIM_CMD_QUERY_QP = 0x22,
    RSIM_CMD_DESTROY_QP = 0x23,
    RSIM_CMD_CREATE_SRQ = 0x28,
    RSIM_CMD_MODIFY_SRQ = 0x29,
    RSIM_CMD_QUERY_SRQ = 0x2a,
    RSIM_CMD_DESTROY_SRQ = 0x2b,
    RSIM_CMD_CREATE_AH = 0x30,
    RSIM_CMD_DESTROY_AH = 0x31,
    RSIM_CMD_REG_MR = 0x38,
    RSIM_CMD_DEREG_MR = 0x39,
    RSIM_CMD_ALLOC_STAG = 0x3a,
    RSIM_CMD_MR_TRANSLATE = 0x3b,
    RSIM_CMD_ADD_GID = 0x40,
    RSIM_CMD_DEL_GID = 0x41,
    RSIM_CMD_MAX = 0x42,
};

/* Completion status; the driver maps them to errno as in the comment. */
enum rsim_status {
    RSIM_STS_OK = 0x00,              /* 0 */
    RSIM_STS_BAD_OPCODE = 0x01,      /* -EOPNOTSUPP */
    RSIM_STS_INVALID = 0x02,         /* -EINVAL: bad parameter value */
    RSIM_STS_RESERVED = 0x03,        /* -EINVAL: reserved field not 0 */
    RSIM_STS_BAD_HANDLE = 0x04,      /* -EINVAL: no such object */
    RSIM_STS_BAD_STATE = 0x05,       /* -EINVAL: illegal state/transition */
    RSIM_STS_NO_RESOURCES = 0x06,    /* -ENOMEM: table full */
    RSIM_STS_LIMIT = 0x07,           /* -EINVAL: above a capability */
    RSIM_STS_BUSY = 0x08,            /* -EBUSY: object still in use */
    RSIM_STS_DMA = 0x09,             /* -EFAULT: guest memory not usable */
    RSIM_STS_ACCESS = 0x0a,          /* -EACCES: key/PD/access mismatch */
    RSIM_STS_UNSUPPORTED = 0x0b,     /* -EOPNOTSUPP: valid, not supported */
    RSIM_STS_RANGE = 0x0c,           /* -ERANGE: address range outside */
    RSIM_STS_EXISTS = 0x0d,          /* -EEXIST: slot already in use */
};

/* Command dword 0 */
FIELD(RSIM_CMD_HDR, OPCODE, 0, 8)
FIELD(RSIM_CMD_HDR, FLAGS, 8, 8)
FIELD(RSIM_CMD_HDR, ID, 16, 16)
/* Completion dword 0 */
FIELD(RSIM_CQE_HDR, ID, 0, 16)
FIELD(RSIM_CQE_HDR, STATUS, 16, 8)
FIELD(RSIM_CQE_HDR, PHASE, 31, 1)

/*
 * Queue descriptor: where a ring of elements lives in guest memory.
 * The ring is a struct rsim_queue_header followed by 2^log2_depth elements
 * of 2^log2_elem_size bytes; it is mapped by a page list (see PBL below)
 * whose byte 0 is the header.  The device uses log2_depth and
 * log2_elem_size from here, never the copies in the header.
 */
struct rsim_queue_desc {
    rsim_le64 addr;          /* level 0: buffer; 1: page list; 2: root */
    uint8_t level;              /* enum rsim_pbl_level */
    uint8_t page_shift;         /* level 0: 0; else in CAP_PAGE_SIZES */
    uint8_t log2_elem_size;
    uint8_t log2_depth;         /* depth = 2^n entries, holds 2^n - 1 */
    rsim_le32 npages;        /* pages in the list (levels 1 and 2) */
};

/*
 * Address vector, used by MODIFY_QP/QUERY_QP and CREATE_AH.
 * RoCEv2 only: an IPv4 peer has an IPv4-mapped GID (::ffff:a.b.c.d).
 */
struct rsim_av {
    uint8_t dgid[16];
    uint8_t dmac[6];
    uint8_t sgid_index;
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint8_t network_type;       /* enum rsim_network_type */
    uint8_t sl;
    uint8_t reserved;
    rsim_le32 flow_label;    /* 20 bits */
};

enum rsim_network_type {
    RSIM_NET_IPV4 = 1,
    RSIM_NET_IPV6 = 2,
};

/* Generic view: every command starts with this dword. */
struct rsim_cmd_hdr {
    rsim_le32 dw0;           /* RSIM_CMD_HDR_* */
};

struct rsim_admin_cmd {
    rsim_le32 dw0;
    uint8_t data[60];
};

struct rsim_admin_cqe {
    rsim_le32 dw0;           /* RSIM_CQE_HDR_* */
    rsim_le16 sq_head;
    rsim_le16 reserved;
    uint8_t result[56];
};

/* QUERY_DEVICE: no parameters; result: */
struct rsim_query_device_resp {
    rsim_le64 node_guid;     /* EUI-64, first byte most significant */
    rsim_le64 sys_image_guid;
    rsim_le64 fw_ver;        /* major << 32 | minor << 16 | sub-minor */
    rsim_le32 vendor_id;
    rsim_le32 vendor_part_id;
    rsim_le32 hw_ver;
    rsim_le32 reserved[5];
};

/* QUERY_PORT (port 1): result: */
struct rsim_query_port_resp {
    uint8_t state;              /* enum rsim_port_state */
    uint8_t phys_state;         /* 3 disabled, 5 link up */
    uint8_t max_mtu;            /* enum rsim_mtu */
    uint8_t active_mtu;         /* from the port's Ethernet MTU */
    rsim_le32 eth_mtu;       /* Ethernet MTU in bytes */
    uint8_t mac[6];
    uint8_t active_speed;       /* IB_SPEED_* encoding */
    uint8_t active_width;       /* IB_WIDTH_* encoding */
    rsim_le32 gid_tbl_len;
    rsim_le32 reserved[9];
};

enum rsim_port_state {
    RSIM_PORT_DOWN = 1,
    RSIM_PORT_ACTIVE = 4,
};

/* Path MTU encoding (the IB enum). */
enum rsim_mtu {
    RSIM_MTU_256 = 1,
    RSIM_MTU_512 = 2,
    RSIM_MTU_1024 = 3,
    RSIM_MTU_2048 = 4,
    RSIM_MTU_4096 = 5,
};

/* SET_PORT */
struct rsim_cmd_set_port {
    rsim_le32 dw0;
    rsim_le32 mask;          /* RSIM_SET_PORT_* */
    rsim_le32 eth_mtu;       /* 68 .. RSIM_MAX_ETH_MTU */
    uint8_t mac[6];             /* unicast, not zero */
    uint8_t reserved[46];
};
#define RSIM_SET_PORT_MTU           (1u << 0)
#define RSIM_SET_PORT_MAC           (1u << 1)
#define RSIM_MIN_ETH_MTU            68
#define RSIM_MAX_ETH_MTU            9000
/* A frame may be this much longer than the MTU: Ethernet header, VLAN tag */
#define RSIM_ETH_FRAME_OVERHEAD     18
/*
 * The port's active (IB) MTU is the largest that fits the Ethernet MTU
 * less the largest RoCEv2 headers of a packet with payload: IPv6 (40),
 * UDP (8), BTH (12), RETH (16) and ICRC (4).
 */
#define RSIM_ROCE_OVERHEAD          80

/* QUERY_STATS: the device writes min(len / 8, RSIM_STAT_COUNT) counters. */
struct rsim_cmd_query_stats {
    rsim_le32 dw0;
    rsim_le32 reserved0;
    rsim_le64 addr;
    rsim_le32 len;           /* bytes available at addr */
    uint8_t reserved[44];
};
struct rsim_query_stats_resp {
    rsim_le32 count;         /* counters written */
    rsim_le32 reserved[13];
};

/*
 * Device statistics, in QUERY_STATS order: X(index name, "user name").
 * The list is a braced initializer list: the enum below and a driver's
 * table of counter names are both made from it, so names never drift
 * apart; what follows X (e.g. the enum's count) goes at its end.
 */
#define RSIM_STATS_LIST(X, ...) {                                          \
    X(TX_FRAMES, "tx_frames"),                                             \
    X(TX_BYTES, "tx_bytes"),                                               \
    X(RX_FRAMES, "rx_frames"),                                             \
    X(RX_BYTES, "rx_bytes"),                                               \
    X(TX_ROCE_PKTS, "tx_roce_packets"),                                    \
    X(RX_ROCE_PKTS, "rx_roce_packets"),                                    \
    X(TX_ETH_FRAMES, "tx_eth_frames"),                                     \
    X(RX_ETH_FRAMES, "rx_eth_frames"),                                     \
    X(RX_ETH_NO_BUF, "rx_eth_no_buffer"),                                  \
    X(RX_DROP_FILTER, "rx_drop_not_for_us"),                               \
    X(RX_DROP_MALFORMED, "rx_drop_malformed"),                             \
    X(RX_ICRC_ERR, "rx_icrc_errors"),                                      \
    X(RX_DROP_NO_QP, "rx_drop_no_qp"),                                     \
    X(LOOPBACK_PKTS, "loopback_packets"),                                  \
    X(RETRANSMITS, "retransmits"),                                         \
    X(TIMEOUTS, "retry_timeouts"),                                         \
    X(RNR_NAK_SENT, "rnr_nak_sent"),                                       \
    X(RNR_NAK_RCVD, "rnr_nak_received"),                                   \
    X(SEQ_NAK_SENT, "seq_nak_sent"),                                       \
    X(SEQ_NAK_RCVD, "seq_nak_received"),                                   \
    X(DUP_REQ, "duplicate_requests"),                                      \
    X(REM_ACCESS_ERR, "remote_access_errors"),                             \
    X(LOC_PROT_ERR, "local_protection_errors"),                            \
    X(COMPLETIONS, "completions"),                                         \
    X(CQ_OVERFLOW, "cq_overflows"),                                        \
    X(FAULT_DROP, "fault_dropped"),                                        \
    X(FAULT_DUP, "fault_duplicated"),                                      \
    X(FAULT_REORDER, "fault_reordered"),                                   \
    X(FAULT_CORRUPT, "fault_corrupted"),                                   \
    X(GUEST_ERRORS, "guest_errors"),                                       \
    X(LOSS_PROBES, "loss_probes"),                                         \
    X(TX_BUDGET_CUTS, "tx_budget_cuts"),                                   \
    X(LOG_SUPPRESSED, "log_suppressed"),                                   \
    X(LOOPBACK_DROPS, "loopback_dropped"),                                 \
    X(LOOPBACK_PEAK, "loopback_queue_peak"),                               \
    X(RX_DEFERRED, "rx_deferred"),                                         \
    X(RX_DROP_BUSY, "rx_drop_busy"),                                       \
    X(FAULT_DRIVER, "fault_driver_damaged"),                               \
    X(TX_AT_DOORBELL, "tx_at_doorbell"),                                   \
    X(RX_DROP_OWN, "rx_drop_own_frames"),                                  \
    X(READ_RESP_WAITS, "read_response_waits"),                             \
    __VA_ARGS__                                                            \
}

#define RSIM_STAT_ENUM(n, s) RSIM_STAT_ ## n
enum rsim_stat RSIM_STATS_LIST(RSIM_STAT_ENUM, RSIM_STAT_COUNT);
#undef RSIM_STAT_ENUM

/* CREATE_EQ: a completion event queue; result dword 0 = EQ number. */
struct rsim_cmd_create_eq {
    rsim_le32 dw0;
    rsim_le32 vector;        /* MSI-X vector, 1 .. MSIX_VECTORS - 1 */
    rsim_le64 addr;          /* contiguous, 64-byte aligned */
    rsim_le32 depth;         /* entries, power of two, <= CAP_MAX_EQE */
    uint8_t reserved[44];
};

/* Commands that only name one object (destroy, dealloc, ...) */
struct rsim_cmd_handle {
    rsim_le32 dw0;
    rsim_le32 handle;        /* EQN, PDN, CQN, QPN, SRQN, AH, key, index */
    uint8_t reserved[56];
};

/* Result of commands that create an object */
struct rsim_create_resp {
    rsim_le32 handle;
    rsim_le32 handle2;       /* REG_MR/ALLOC_STAG: rkey */
    rsim_le32 reserved[12];
};

/* CREATE_ETHQ: the port's one TX or one RX descriptor ring. */
struct rsim_cmd_create_ethq {
    rsim_le32 dw0;
    uint8_t kind;               /* enum rsim_ethq_kind */
    uint8_t reserved0[3];
    rsim_le32 eqn;           /* completion EQ that gets ETH events */
    rsim_le32 reserved1;
    rsim_le64 addr;          /* contiguous, 16-byte aligned */
    rsim_le32 depth;         /* power of two, <= CAP_MAX_ETH_DEPTH */
    uint8_t reserved[36];
};
/* DESTROY_ETHQ uses rsim_cmd_handle with handle = kind. */
enum rsim_ethq_kind {
    RSIM_ETHQ_TX = 0,
    RSIM_ETHQ_RX = 1,
};

/*
 * Ethernet descriptor (both rings).  TX: the driver fills addr/len and
 * clears flags; the device sets DONE (and ERR) when the frame has left.
 * RX: the driver fills addr/len (buffer size); the device writes the frame,
 * sets len to the frame length and sets DONE.
 */
struct rsim_eth_desc {
    rsim_le64 addr;
    rsim_le16 len;
    rsim_le16 flags;         /* RSIM_ETH_DESC_* */
    rsim_le32 reserved;
};
#define RSIM_ETH_DESC_DONE          (1u << 0)
#define RSIM_ETH_DESC_ERR           (1u << 1)
/* RX buffers hold the largest frame with 4 bytes to spare */
#define RSIM_ETH_MIN_RX_BUF \
    (RSIM_MAX_ETH_MTU + RSIM_ETH_FRAME_OVERHEAD + 4)

/* CREATE_CQ: result dword 0 = CQN. */
struct rsim_cmd_create_cq {
    rsim_le32 dw0;
    rsim_le32 eqn;           /* an existing EQ: there is no "none" */
    struct rsim_queue_desc q; /* elements: struct rsim_cqe slots */
    rsim_le32 db_page;
    uint8_t reserved[36];
};

/* RESIZE_CQ: the device moves unconsumed completions to the new ring. */
struct rsim_cmd_resize_cq {
    rsim_le32 dw0;
    rsim_le32 cqn;
    struct rsim_queue_desc q;
    uint8_t reserved[40];
};

/* ARM_CQ (same effect as the CQ doorbell) */
struct rsim_cmd_arm_cq {
    rsim_le32 dw0;
    rsim_le32 cqn;
    rsim_le32 arm;           /* enum rsim_cq_arm */
    uint8_t reserved[52];
};

enum rsim_qp_type {
    RSIM_QPT_RC = 2,         /* IB_QPT_* values */
    RSIM_QPT_UC = 3,
    RSIM_QPT_UD = 4,
    RSIM_QPT_GSI = 1,
};

#define RSIM_NO_SRQ                 0xffffffffu
#define RSIM_GSI_QPN                1

/* CREATE_QP: result dword 0 = QPN.  The QP starts in RESET. */
struct rsim_cmd_create_qp {
    rsim_le32 dw0;
    uint8_t qp_type;            /* enum rsim_qp_type */
    uint8_t flags;              /* RSIM_QP_FLAG_* */
    uint8_t max_send_sge;
    uint8_t max_recv_sge;
    rsim_le32 pdn;
    rsim_le32 send_cqn;
    rsim_le32 recv_cqn;
    rsim_le32 srqn;          /* RSIM_NO_SRQ or an SRQ (any PD) */
    struct rsim_queue_desc sq; /* elements: struct rsim_send_wqe */
    struct rsim_queue_desc rq; /* struct rsim_recv_wqe; unused with SRQ */
    rsim_le16 max_inline;
    rsim_le16 db_page;
    rsim_le32 reserved;
};
#define RSIM_QP_FLAG_SQ_SIG_ALL     (1u << 0)

/* MODIFY_QP and QUERY_QP: attributes in a 128-byte block in guest memory */
struct rsim_cmd_qp_attr {
    rsim_le32 dw0;
    rsim_le32 qpn;
    rsim_le64 addr;          /* struct rsim_qp_attr, 8-byte aligned */
    uint8_t reserved[48];
};

/* QP states (IB_QPS_*) */
enum rsim_qp_state {
    RSIM_QPS_RESET = 0,
    RSIM_QPS_INIT = 1,
    RSIM_QPS_RTR = 2,
    RSIM_QPS_RTS = 3,
    RSIM_QPS_SQD = 4,
    RSIM_QPS_SQE = 5,
    RSIM_QPS_ERR = 6,
};

/* Attribute mask bits (the IB_QP_* values) */
#define RSIM_QP_STATE               (1u << 0)
#define RSIM_QP_CUR_STATE           (1u << 1)
#define RSIM_QP_EN_SQD_ASYNC_NOTIFY (1u << 2)
#define RSIM_QP_ACCESS_FLAGS        (1u << 3)
#define RSIM_QP_PKEY_INDEX          (1u << 4)
#define RSIM_QP_PORT                (1u << 5)
#define RSIM_QP_QKEY                (1u << 6)
#define RSIM_QP_AV                  (1u << 7)
#define RSIM_QP_PATH_MTU            (1u << 8)
#define RSIM_QP_TIMEOUT             (1u << 9)
#define RSIM_QP_RETRY_CNT           (1u << 10)
#define RSIM_QP_RNR_RETRY           (1u << 11)
#define RSIM_QP_RQ_PSN              (1u << 12)
#define RSIM_QP_MAX_QP_RD_ATOMIC    (1u << 13)
#define RSIM_QP_ALT_PATH            (1u << 14)
#define RSIM_QP_MIN_RNR_TIMER       (1u << 15)
#define RSIM_QP_SQ_PSN              (1u << 16)
#define RSIM_QP_MAX_DEST_RD_ATOMIC  (1u << 17)
#define RSIM_QP_PATH_MIG_STATE      (1u << 18)
#define RSIM_QP_CAP                 (1u << 19)
#define RSIM_QP_DEST_QPN            (1u << 20)
#define RSIM_QP_ATTR_SUPPORTED      0x001fbfffu /* all but ALT_PATH */

struct rsim_qp_attr {
    rsim_le32 attr_mask;     /* RSIM_QP_*; ignored by QUERY_QP */
    uint8_t qp_state;
    uint8_t cur_qp_state;
    uint8_t path_mtu;           /* enum rsim_mtu */
    uint8_t path_mig_state;
    rsim_le32 qkey;
    rsim_le32 rq_psn;        /* 24 bits */
    rsim_le32 sq_psn;        /* 24 bits */
    rsim_le32 dest_qp_num;   /* 24 bits */
    rsim_le32 qp_access_flags; /* RSIM_ACCESS_REMOTE_* */
    rsim_le16 pkey_index;
    uint8_t port_num;
    uint8_t sq_draining;        /* QUERY_QP only */
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t min_rnr_timer;      /* 5-bit IB encoding */
    uint8_t timeout;            /* 4.096 us * 2^timeout, 0 = infinite */
    uint8_t retry_cnt;          /* 0..7 */
    uint8_t rnr_retry;          /* 0..7, 7 = infinite */
    uint8_t en_sqd_async_notify;
    uint8_t qp_type;            /* QUERY_QP only */
    rsim_le32 max_send_wr;   /* QUERY_QP only: the caps */
    rsim_le32 max_recv_wr;
    rsim_le32 max_send_sge;
    rsim_le32 max_recv_sge;
    rsim_le32 max_inline_data;
    rsim_le32 reserved0;
    struct rsim_av av;
    uint8_t reserved1[32];
};

/* CREATE_SRQ: result dword 0 = SRQN. */
struct rsim_cmd_create_srq {
    rsim_le32 dw0;
    rsim_le32 pdn;
    struct rsim_queue_desc q; /* elements: struct rsim_recv_wqe */
    rsim_le32 limit;         /* SRQ limit event threshold, 0 = off */
    uint8_t max_sge;
    uint8_t reserved0;
    rsim_le16 db_page;
    uint8_t reserved[32];
};

/* MODIFY_SRQ */
struct rsim_cmd_modify_srq {
    rsim_le32 dw0;
    rsim_le32 srqn;
    rsim_le32 mask;          /* RSIM_SRQ_* */
    rsim_le32 limit;
    struct rsim_queue_desc q; /* RSIM_SRQ_MAX_WR: the new ring */
    uint8_t reserved[32];
};
#define RSIM_SRQ_MAX_WR             (1u << 0) /* IB_SRQ_MAX_WR: resize */
#define RSIM_SRQ_LIMIT              (1u << 1) /* IB_SRQ_LIMIT: arm limit */

/* QUERY_SRQ result */
struct rsim_query_srq_resp {
    rsim_le32 max_wr;
    rsim_le32 max_sge;
    rsim_le32 limit;
    rsim_le32 reserved[11];
};

/* CREATE_AH: result dword 0 = AH number (never 0). */
struct rsim_cmd_create_ah {
    rsim_le32 dw0;
    rsim_le32 pdn;
    struct rsim_av av;
    uint8_t reserved[24];
};

/* Memory access rights (the IB_ACCESS_* values) */
#define RSIM_ACCESS_LOCAL_WRITE     (1u << 0)
#define RSIM_ACCESS_REMOTE_WRITE    (1u << 1)
#define RSIM_ACCESS_REMOTE_READ     (1u << 2)
#define RSIM_ACCESS_REMOTE_ATOMIC   (1u << 3)
#define RSIM_ACCESS_MW_BIND         (1u << 4)
#define RSIM_ACCESS_ZERO_BASED      (1u << 5)
#define RSIM_ACCESS_REMOTE          (RSIM_ACCESS_REMOTE_WRITE | \
                     RSIM_ACCESS_REMOTE_READ |  \
                     RSIM_ACCESS_REMOTE_ATOMIC)
#define RSIM_ACCESS_SUPPORTED       0x3fu
/*
 * Internal access kinds the translation checks: LOCAL_READ is implied by
 * every MR; the others need the matching RSIM_ACCESS_* bit.
 */
#define RSIM_ACCESS_LOCAL_READ      0u

/*
 * Page lists (PBL).
 *  level 0: addr is the guest-physical address of a contiguous buffer.
 *  level 1: addr points at npages little-endian 8-byte page addresses.
 *  level 2: addr points at a root of ceil(npages / 512) 8-byte addresses of
 *           leaf lists; each leaf holds up to 512 page addresses (4 KiB).
 * Page addresses are aligned to the page size; the low bits must be 0.
 * Byte 0 of the mapped space is at offset fbo in the first page.
 */
enum rsim_pbl_level {
    RSIM_PBL_LEVEL0 = 0,
    RSIM_PBL_LEVEL1 = 1,
    RSIM_PBL_LEVEL2 = 2,
};
#define RSIM_PBL_LEAF_ENTRIES       512
#define RSIM_PBL_ENTRY_SIZE         8
#define RSIM_MIN_PAGE_SHIFT         12
#define RSIM_MAX_PAGE_SHIFT         30

/* REG_MR: result: handle = lkey, handle2 = rkey (0 without remote access) */
struct rsim_cmd_reg_mr {
    rsim_le32 dw0;
    rsim_le32 pdn;
    rsim_le32 access;        /* RSIM_ACCESS_* */
    rsim_le32 flags;         /* RSIM_MR_FLAG_* */
    rsim_le64 iova;          /* address the MR's users name */
    rsim_le64 length;
    rsim_le64 pbl_addr;      /* as rsim_queue_desc.addr */
    rsim_le32 npages;
    uint8_t level;              /* enum rsim_pbl_level */
    uint8_t page_shift;         /* as rsim_queue_desc.page_shift */
    rsim_le16 reserved0;
    rsim_le32 fbo;           /* offset of iova in its first page */
    uint8_t reserved[12];       /* to the command's end: no padding */
};
/*
 * PHYS: the MR covers all guest-physical memory, iova == address; level,
 * page list, iova, length and fbo must be 0.  For the kernel's DMA MR.
 */
#define RSIM_MR_FLAG_PHYS           (1u << 0)

/*
 * ALLOC_STAG: reserve a key for fast registration.  The MR starts FREE; a
 * REG_MR work request makes it VALID using the level-1 page list at
 * pbl_addr, which holds up to max_pages entries.  result: handle = key.
 */
struct rsim_cmd_alloc_stag {
    rsim_le32 dw0;
    rsim_le32 pdn;
    rsim_le32 max_pages;
    rsim_le32 reserved0;
    rsim_le64 pbl_addr;
    uint8_t reserved[40];
};

/*
 * MR_TRANSLATE (diagnostic): runs the translation every data access uses.
 * Status OK and the address of iova, or the status the access would get.
 */
struct rsim_cmd_mr_translate {
    rsim_le32 dw0;
    rsim_le32 key;
    rsim_le32 pdn;
    rsim_le32 access;        /* rights the access needs */
    rsim_le64 iova;
    rsim_le64 length;
    uint8_t reserved[32];
};
struct rsim_mr_translate_resp {
    rsim_le64 addr;          /* guest-physical address of iova */
    rsim_le64 contig;        /* bytes contiguous from addr (<= length) */
    uint8_t level;
    uint8_t page_shift;
    uint8_t state;              /* enum rsim_mr_state */
    uint8_t reserved0;
    rsim_le32 reserved[9];
};
enum rsim_mr_state {
    RSIM_MR_STATE_INVALID = 0, /* no such entry */
    RSIM_MR_STATE_FREE = 1,    /* allocated, not registered */
    RSIM_MR_STATE_VALID = 2,
};

/* Keys: 24-bit index, 8-bit variable key */
#define RSIM_KEY_INDEX(key)         ((key) >> 8)
#define RSIM_KEY_VARIANT(key)       ((key) & 0xffu)

/* ADD_GID / DEL_GID (RoCEv2 GIDs only) */
struct rsim_cmd_gid {
    rsim_le32 dw0;
    rsim_le32 index;
    uint8_t gid[16];
    uint8_t type;               /* RSIM_GID_TYPE_ROCE_V2 */
    uint8_t reserved[39];
};
#define RSIM_GID_TYPE_ROCE_V2       2

/*
 * Event queues: 16-byte entries, dword 0 written last.
 * dword 0: phase [0], type [15:8]; dword 1: object; dwords 2-3: data.
 */
FIELD(RSIM_EQE_HDR, PHASE, 0, 1)
FIELD(RSIM_EQE_HDR, TYPE, 8, 8)

struct rsim_eqe {
    rsim_le32 dw0;
    rsim_le32 object;        /* QPN, CQN, SRQN, port, ETH kind */
    rsim_le64 data;          /* event specific */
};

enum rsim_event_type {
    /* async EQ */
    RSIM_EV_PORT_ACTIVE = 0x01,
    RSIM_EV_PORT_DOWN = 0x02,
    RSIM_EV_CQ_ERR = 0x03,           /* CQ overflow or bad CQ memory */
    RSIM_EV_QP_FATAL = 0x04,         /* local work queue catastrophic */
    RSIM_EV_QP_REQ_ERR = 0x05,       /* invalid request, local WQ error */
    RSIM_EV_QP_ACCESS_ERR = 0x06,    /* local access violation */
    RSIM_EV_COMM_EST = 0x07,
    RSIM_EV_SQ_DRAINED = 0x08,
    RSIM_EV_QP_LAST_WQE = 0x09,
    RSIM_EV_SRQ_LIMIT = 0x0a,
    RSIM_EV_SRQ_ERR = 0x0b,
    RSIM_EV_DEVICE_FATAL = 0x0c,     /* data = fatal reason */
    /* completion EQs */
    RSIM_EV_COMPLETION = 0x40,       /* object = CQN */
    RSIM_EV_ETH = 0x41,              /* object = enum rsim_ethq_kind */
};

/*
 * Work and completion queue rings: the Soft-RoCE user-queue ABI.
 * Ring = header (below) + elements at RSIM_QUEUE_DATA_OFFSET.  Indices lie
 * in [0, depth - 1]; the ring is full when (prod + 1) & mask == cons.
 * SQ/RQ/SRQ: the driver or process produces, the device consumes.
 * CQ: the device produces, the driver or process consumes.
 */
#define RSIM_QUEUE_LOG2_ELEM_OFFSET 0
#define RSIM_QUEUE_MASK_OFFSET      4
#define RSIM_QUEUE_PROD_OFFSET      128
#define RSIM_QUEUE_CONS_OFFSET      256
#define RSIM_QUEUE_DATA_OFFSET      384

struct rsim_queue_header {
    rsim_le32 log2_elem_size;        /* written by the driver */
    rsim_le32 index_mask;            /* written by the driver */
    rsim_le32 pad1[30];
    rsim_le32 producer_index;
    rsim_le32 pad2[31];
    rsim_le32 consumer_index;
    rsim_le32 pad3[31];
};

struct rsim_sge {
    rsim_le64 addr;
    rsim_le32 length;
    rsim_le32 lkey;
};

/* Send opcodes (IB_WR_* values); REG_MR is only posted by the kernel. */
enum rsim_wr_opcode {
    RSIM_WR_RDMA_WRITE = 0,
    RSIM_WR_RDMA_WRITE_WITH_IMM = 1,
    RSIM_WR_SEND = 2,
    RSIM_WR_SEND_WITH_IMM = 3,
    RSIM_WR_RDMA_READ = 4,
    RSIM_WR_ATOMIC_CMP_AND_SWP = 5,
    RSIM_WR_ATOMIC_FETCH_AND_ADD = 6,
    RSIM_WR_LOCAL_INV = 7,
    RSIM_WR_SEND_WITH_INV = 9,
    RSIM_WR_ATOMIC_WRITE = 15,        /* 8 bytes, written atomically */
    RSIM_WR_REG_MR = 0x20,
};

/* send_flags (IB_SEND_* values) */
#define RSIM_SEND_FENCE             (1u << 0)
#define RSIM_SEND_SIGNALED          (1u << 1)
#define RSIM_SEND_SOLICITED         (1u << 2)
#define RSIM_SEND_INLINE            (1u << 3)

/* Fast registration request (kernel-posted REG_MR), inside wr below. */
struct rsim_wr_reg {
    rsim_le64 iova;
    rsim_le64 length;
    rsim_le32 key;           /* new key: same index, new low 8 bits */
    rsim_le32 access;
    rsim_le32 npages;        /* entries filled in the stag's page list */
    uint8_t page_shift;
    uint8_t reserved0[3];
    rsim_le32 fbo;
    rsim_le32 reserved[3];
};

/*
 * Send WQE (struct rxe_send_wqe layout).  The device reads only the fields
 * named here; status..has_rd_atomic and dma.resid/cur_sge/sge_offset are the
 * Soft-RoCE kernel's scratch space and are ignored.
 */
struct rsim_send_wqe {
    rsim_le64 wr_id;
    rsim_le32 reserved0;
    rsim_le32 opcode;        /* enum rsim_wr_opcode */
    rsim_le32 send_flags;    /* RSIM_SEND_* */
    rsim_le32 ex;            /* imm_data (big-endian) or invalidate rkey */
    union {
        struct {
            rsim_le64 remote_addr;
            rsim_le32 rkey;
            rsim_le32 reserved;
        } rdma;
        struct {
            rsim_le64 remote_addr;
            rsim_le64 compare_add;
            rsim_le64 swap;
            rsim_le32 rkey;
            rsim_le32 reserved;
        } atomic;
        struct {
            rsim_le32 remote_qpn;
            rsim_le32 remote_qkey;
            rsim_le16 pkey_index;
            rsim_le16 reserved;
            rsim_le32 ah_num;
            rsim_le32 pad[4];
            uint8_t av[88];     /* Soft-RoCE address vector, unused */
        } ud;
        struct rsim_wr_reg reg;
        uint8_t raw[120];
    } wr;
    rsim_le32 status;
    rsim_le32 state;
    rsim_le64 iova;
    rsim_le32 mask;
    rsim_le32 first_psn;
    rsim_le32 last_psn;
    rsim_le32 ack_length;
    rsim_le32 ssn;
    rsim_le32 has_rd_atomic;
    struct {
        rsim_le32 length;        /* inline: data bytes; else not read */
        rsim_le32 resid;
        rsim_le32 cur_sge;
        rsim_le32 num_sge;
        rsim_le32 sge_offset;
        rsim_le32 reserved;
    } dma;
    /* then num_sge x struct rsim_sge, or the inline data bytes */
    struct rsim_sge sge[];
};
#define RSIM_SEND_WQE_HDR_SIZE      208

/* Receive WQE (struct rxe_recv_wqe layout) */
struct rsim_recv_wqe {
    rsim_le64 wr_id;
    rsim_le32 reserved;
    rsim_le32 padding;
    struct {
        rsim_le32 length;
        rsim_le32 resid;
        rsim_le32 cur_sge;
        rsim_le32 num_sge;
        rsim_le32 sge_offset;
        rsim_le32 reserved;
    } dma;
    struct rsim_sge sge[];
};
#define RSIM_RECV_WQE_HDR_SIZE      40

/* Completion (struct ib_uverbs_wc layout) in a 64-byte slot. */
struct rsim_cqe {
    rsim_le64 wr_id;
    rsim_le32 status;        /* enum rsim_wc_status */
    rsim_le32 opcode;        /* enum rsim_wc_opcode */
    rsim_le32 vendor_err;
    rsim_le32 byte_len;
    rsim_le32 ex;            /* imm_data (big-endian) or invalidated rkey */
    rsim_le32 qp_num;
    rsim_le32 src_qp;
    rsim_le32 wc_flags;      /* RSIM_WC_* (libibverbs IBV_WC_* values) */
    rsim_le16 pkey_index;
    rsim_le16 slid;
    uint8_t sl;
    uint8_t dlid_path_bits;
    uint8_t port_num;
    uint8_t reserved;
};
#define RSIM_CQE_SIZE               48
#define RSIM_CQE_LOG2_SLOT          6

enum rsim_wc_status {
    RSIM_WC_SUCCESS = 0,
    RSIM_WC_LOC_LEN_ERR = 1,
    RSIM_WC_LOC_QP_OP_ERR = 2,
    RSIM_WC_LOC_PROT_ERR = 4,
    RSIM_WC_WR_FLUSH_ERR = 5,
    RSIM_WC_BAD_RESP_ERR = 7,
    RSIM_WC_LOC_ACCESS_ERR = 8,
    RSIM_WC_REM_INV_REQ_ERR = 9,
    RSIM_WC_REM_ACCESS_ERR = 10,
    RSIM_WC_REM_OP_ERR = 11,
    RSIM_WC_RETRY_EXC_ERR = 12,
    RSIM_WC_RNR_RETRY_EXC_ERR = 13,
    RSIM_WC_FATAL_ERR = 19,
    RSIM_WC_GENERAL_ERR = 21,
};

enum rsim_wc_opcode {
    RSIM_WC_SEND = 0,
    RSIM_WC_RDMA_WRITE = 1,
    RSIM_WC_RDMA_READ = 2,
    RSIM_WC_COMP_SWAP = 3,
    RSIM_WC_FETCH_ADD = 4,
    RSIM_WC_LOCAL_INV = 6,
    RSIM_WC_REG_MR = 8,
    RSIM_WC_ATOMIC_WRITE = 9,
    RSIM_WC_RECV = 128,
    RSIM_WC_RECV_RDMA_WITH_IMM = 129,
};

/* wc_flags as user space (libibverbs) defines them */
#define RSIM_WC_GRH                 (1u << 0)
#define RSIM_WC_WITH_IMM            (1u << 1)
#define RSIM_WC_WITH_INV            (1u << 3)

/*
 * sl of a UD receive completion.  RoCE carries no SL, so the field tells
 * how the datagram arrived, in the encoding of mlx5 devices: UCX's UD
 * transport reads it to find the destination address in the 40 GRH bytes
 * (an IPv4 address in bytes 36..39, an IPv6 GID in bytes 24..39).  RC and
 * UC completions have sl 0.
 */
#define RSIM_CQE_SL_UDP             (1u << 3)   /* RoCEv2: UDP-encapsulated */
/* bits 2..0: mlx5's values, not those of enum rsim_network_type */
#define RSIM_CQE_SL_L3_MASK         0x7u
#define RSIM_CQE_SL_L3_IPV6         1u
#define RSIM_CQE_SL_L3_IPV4         2u

/* Layout checks: these sizes and offsets are the ABI. */
#define RSIM_HW_STATIC_ASSERT(c) _Static_assert(c, #c)
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_admin_cmd) == RSIM_AQ_ENTRY_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_admin_cqe) == RSIM_ACQ_ENTRY_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_set_port) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_query_stats) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_eq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_handle) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_ethq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_cq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_resize_cq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_arm_cq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_qp) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_qp_attr) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_srq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_modify_srq) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_create_ah) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_reg_mr) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_alloc_stag) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_mr_translate) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cmd_gid) == 64);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_query_device_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_query_port_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_query_stats_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_create_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_query_srq_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_mr_translate_resp) == 56);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_queue_desc) == 16);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_av) == 32);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_qp_attr) == 128);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_eqe) == RSIM_EQ_ENTRY_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_eth_desc) == RSIM_ETH_DESC_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_queue_header) ==
              RSIM_QUEUE_DATA_OFFSET);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_sge) == 16);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_send_wqe) == RSIM_SEND_WQE_HDR_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_recv_wqe) == RSIM_RECV_WQE_HDR_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_cqe) == RSIM_CQE_SIZE);
RSIM_HW_STATIC_ASSERT(sizeof(struct rsim_wr_reg) == 48);

#endif /* RDMA_SIM_HW_H */
