/*
 * rdma-sim: RoCEv2 wire format
 *
 * Ethernet / IPv4 or IPv6 / UDP 4791 / BTH / extension headers / payload /
 * pad / ICRC, as Linux Soft-RoCE puts it on the wire.  All header fields
 * are big-endian.  This file knows packet layouts only; the transport
 * decides what to send.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_ROCE_H
#define HW_RDMA_SIM_ROCE_H

#define ROCE_UDP_PORT           4791
#define ROCE_ETH_LEN            14
#define ROCE_IPV4_LEN           20
#define ROCE_IPV6_LEN           40
#define ROCE_UDP_LEN            8
#define ROCE_BTH_LEN            12
#define ROCE_RETH_LEN           16
#define ROCE_AETH_LEN           4
#define ROCE_ATMETH_LEN         28
#define ROCE_ATMACK_LEN         8
#define ROCE_IMMDT_LEN          4
#define ROCE_IETH_LEN           4
#define ROCE_DETH_LEN           8
#define ROCE_ICRC_LEN           4
#define ROCE_MAX_PAYLOAD        4096
/* Largest frame: IPv6, the longest extension headers, MTU payload, pad */
#define ROCE_MAX_FRAME          (ROCE_ETH_LEN + ROCE_IPV6_LEN + ROCE_UDP_LEN + \
                                 ROCE_BTH_LEN + ROCE_ATMETH_LEN +            \
                                 ROCE_MAX_PAYLOAD + 3 + ROCE_ICRC_LEN)

#define ROCE_DEFAULT_PKEY       0xffff
#define ROCE_PSN_MASK           0xffffff
#define ROCE_QPN_MASK           0xffffff

/* BTH opcodes (IBTA): transport class in the top 3 bits */
enum roce_opcode {
    ROCE_RC_SEND_FIRST = 0x00,
    ROCE_RC_SEND_MIDDLE = 0x01,
    ROCE_RC_SEND_LAST = 0x02,
    ROCE_RC_SEND_LAST_IMM = 0x03,
    ROCE_RC_SEND_ONLY = 0x04,
    ROCE_RC_SEND_ONLY_IMM = 0x05,
    ROCE_RC_WRITE_FIRST = 0x06,
    ROCE_RC_WRITE_MIDDLE = 0x07,
    ROCE_RC_WRITE_LAST = 0x08,
    ROCE_RC_WRITE_LAST_IMM = 0x09,
    ROCE_RC_WRITE_ONLY = 0x0a,
    ROCE_RC_WRITE_ONLY_IMM = 0x0b,
    ROCE_RC_READ_REQUEST = 0x0c,
    ROCE_RC_READ_RESP_FIRST = 0x0d,
    ROCE_RC_READ_RESP_MIDDLE = 0x0e,
    ROCE_RC_READ_RESP_LAST = 0x0f,
    ROCE_RC_READ_RESP_ONLY = 0x10,
    ROCE_RC_ACK = 0x11,
    ROCE_RC_ATOMIC_ACK = 0x12,
    ROCE_RC_CMP_SWAP = 0x13,
    ROCE_RC_FETCH_ADD = 0x14,
    ROCE_RC_SEND_LAST_INV = 0x16,
    ROCE_RC_SEND_ONLY_INV = 0x17,
    ROCE_RC_ATOMIC_WRITE = 0x1d,
    ROCE_UC_BASE = 0x20,
    ROCE_UD_SEND_ONLY = 0x64,
    ROCE_UD_SEND_ONLY_IMM = 0x65,
};

#define ROCE_OPCODE_CLASS(op)   ((op) & 0xe0)
#define ROCE_CLASS_RC           0x00
#define ROCE_CLASS_UC           0x20
#define ROCE_CLASS_UD           0x60

/* What an opcode carries and means (roce_opcode_flags()) */
enum {
    ROCE_F_RETH = 1 << 0,
    ROCE_F_AETH = 1 << 1,
    ROCE_F_ATMETH = 1 << 2,
    ROCE_F_ATMACK = 1 << 3,
    ROCE_F_IMMDT = 1 << 4,
    ROCE_F_IETH = 1 << 5,
    ROCE_F_DETH = 1 << 6,
    ROCE_F_PAYLOAD = 1 << 7,
    ROCE_F_FIRST = 1 << 8,      /* first packet of a message */
    ROCE_F_LAST = 1 << 9,       /* last packet of a message */
    ROCE_F_SEND = 1 << 10,
    ROCE_F_WRITE = 1 << 11,
    ROCE_F_READ = 1 << 12,      /* READ request */
    ROCE_F_ATOMIC = 1 << 13,    /* CMP_SWAP or FETCH_ADD request */
    ROCE_F_RESP = 1 << 14,      /* READ response, ACK, ATOMIC ACK */
    ROCE_F_VALID = 1 << 15,
};
/* ATOMIC_WRITE is a WRITE_ONLY of exactly 8 aligned bytes */

/* AETH syndromes */
#define ROCE_AETH_ACK           0x00
#define ROCE_AETH_RNR_NAK       0x20
#define ROCE_AETH_NAK           0x60
#define ROCE_AETH_TYPE_MASK     0x60
#define ROCE_NAK_PSN_SEQ        0x60
#define ROCE_NAK_INVALID_REQ    0x61
#define ROCE_NAK_REM_ACCESS     0x62
#define ROCE_NAK_REM_OP         0x63
#define ROCE_AETH_CREDITS_INVALID 0x1f

/* The addresses a QP's packets travel between */
typedef struct RocePath {
    uint8_t smac[6];
    uint8_t dmac[6];
    uint8_t sip[16];            /* GIDs; IPv4 as ::ffff:a.b.c.d */
    uint8_t dip[16];
    bool ipv6;
    uint8_t tclass;
    uint8_t hop_limit;
    uint32_t flow_label;
    uint16_t sport;             /* UDP source port */
} RocePath;

/* A packet being built */
typedef struct RoceFrame {
    uint8_t data[ROCE_MAX_FRAME];
    unsigned l3;                /* offset of the IP header */
    unsigned bth;               /* offset of the BTH */
    unsigned len;               /* bytes so far */
    bool ipv6;
} RoceFrame;

/* A received packet, parsed and checked */
typedef struct RocePkt {
    const uint8_t *l3;          /* the IP header (20 or 40 bytes) */
    bool ipv6;
    uint8_t smac[6];
    uint8_t sip[16];
    uint8_t dip[16];
    uint8_t opcode;
    uint16_t flags;             /* ROCE_F_* */
    bool se;
    bool ackreq;
    uint8_t pad;
    uint16_t pkey;
    uint32_t dqpn;
    uint32_t psn;
    uint64_t va;                /* RETH or AtomicETH */
    uint32_t rkey;              /* RETH or AtomicETH */
    uint32_t dma_len;           /* RETH */
    uint64_t swap_add;          /* AtomicETH */
    uint64_t compare;           /* AtomicETH */
    uint8_t syndrome;           /* AETH */
    uint32_t msn;               /* AETH */
    uint64_t orig;              /* AtomicAckETH */
    uint32_t imm;               /* ImmDt, in wire (big-endian) byte order */
    uint32_t inv_rkey;          /* IETH */
    uint32_t qkey;              /* DETH */
    uint32_t src_qpn;           /* DETH */
    const uint8_t *payload;
    uint32_t paylen;
} RocePkt;

enum roce_parse_result {
    ROCE_NOT_ROCE,              /* not RoCEv2: for the Ethernet device */
    ROCE_MALFORMED,             /* RoCEv2 but broken: drop */
    ROCE_BAD_ICRC,
    ROCE_OK,
};

uint16_t roce_opcode_flags(uint8_t opcode);
unsigned roce_ext_len(uint16_t flags);
bool roce_gid_is_v4mapped(const uint8_t *gid);

void roce_frame_start(RoceFrame *f, const RocePath *p, uint8_t opcode,
                      bool se, bool ackreq, uint32_t dqpn, uint32_t psn);
uint8_t *roce_frame_put(RoceFrame *f, unsigned n);
void roce_put_reth(RoceFrame *f, uint64_t va, uint32_t rkey, uint32_t len);
void roce_put_aeth(RoceFrame *f, uint8_t syndrome, uint32_t msn);
void roce_put_atmeth(RoceFrame *f, uint64_t va, uint32_t rkey,
                     uint64_t swap_add, uint64_t compare);
void roce_put_u32(RoceFrame *f, uint32_t val);
void roce_put_u64(RoceFrame *f, uint64_t val);
void roce_frame_finish(RoceFrame *f, unsigned paylen);

enum roce_parse_result roce_parse(const uint8_t *frame, size_t len,
                                  RocePkt *pkt);

/* 24-bit PSN arithmetic */
static inline uint32_t roce_psn_add(uint32_t psn, uint32_t n)
{
    return (psn + n) & ROCE_PSN_MASK;
}

/* <0, 0, >0 as a is before, equal to, after b (modulo 2^24) */
static inline int roce_psn_cmp(uint32_t a, uint32_t b)
{
    return ((int32_t)((a - b) << 8)) >> 8;
}

#endif /* HW_RDMA_SIM_ROCE_H */
