/*
 * rdma-sim: RoCEv2 packet building and parsing, ICRC
 *
 * The ICRC is a CRC-32 (zlib polynomial) over: eight 0xff bytes standing
 * for the masked LRH, the IP header with its variant fields set to ones
 * (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow label, hop limit),
 * the UDP header with checksum 0xffff, the BTH with its reserved byte 4
 * set to 0xff, the remaining headers, payload and pad.  It is stored in
 * little-endian byte order, as Soft-RoCE stores it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include <zlib.h>
#ifdef HOST_X86_64
#include <immintrin.h>
#endif
#include "roce.h"

#define OP(name, f) [ROCE_RC_ ## name] = ((f) | ROCE_F_VALID)

static const uint16_t roce_rc_flags[0x20] = {
    OP(SEND_FIRST, ROCE_F_PAYLOAD | ROCE_F_FIRST | ROCE_F_SEND),
    OP(SEND_MIDDLE, ROCE_F_PAYLOAD | ROCE_F_SEND),
    OP(SEND_LAST, ROCE_F_PAYLOAD | ROCE_F_LAST | ROCE_F_SEND),
    OP(SEND_LAST_IMM, ROCE_F_IMMDT | ROCE_F_PAYLOAD | ROCE_F_LAST |
       ROCE_F_SEND),
    OP(SEND_ONLY, ROCE_F_PAYLOAD | ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_SEND),
    OP(SEND_ONLY_IMM, ROCE_F_IMMDT | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_LAST | ROCE_F_SEND),
    OP(WRITE_FIRST, ROCE_F_RETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_WRITE),
    OP(WRITE_MIDDLE, ROCE_F_PAYLOAD | ROCE_F_WRITE),
    OP(WRITE_LAST, ROCE_F_PAYLOAD | ROCE_F_LAST | ROCE_F_WRITE),
    OP(WRITE_LAST_IMM, ROCE_F_IMMDT | ROCE_F_PAYLOAD | ROCE_F_LAST |
       ROCE_F_WRITE),
    OP(WRITE_ONLY, ROCE_F_RETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_LAST | ROCE_F_WRITE),
    OP(WRITE_ONLY_IMM, ROCE_F_RETH | ROCE_F_IMMDT | ROCE_F_PAYLOAD |
       ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_WRITE),
    OP(READ_REQUEST, ROCE_F_RETH | ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_READ),
    OP(READ_RESP_FIRST, ROCE_F_AETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_RESP),
    OP(READ_RESP_MIDDLE, ROCE_F_PAYLOAD | ROCE_F_RESP),
    OP(READ_RESP_LAST, ROCE_F_AETH | ROCE_F_PAYLOAD | ROCE_F_LAST |
       ROCE_F_RESP),
    OP(READ_RESP_ONLY, ROCE_F_AETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_LAST | ROCE_F_RESP),
    OP(ACK, ROCE_F_AETH | ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_RESP),
    OP(ATOMIC_ACK, ROCE_F_AETH | ROCE_F_ATMACK | ROCE_F_FIRST | ROCE_F_LAST |
       ROCE_F_RESP),
    OP(CMP_SWAP, ROCE_F_ATMETH | ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_ATOMIC),
    OP(FETCH_ADD, ROCE_F_ATMETH | ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_ATOMIC),
    OP(SEND_LAST_INV, ROCE_F_IETH | ROCE_F_PAYLOAD | ROCE_F_LAST |
       ROCE_F_SEND),
    OP(SEND_ONLY_INV, ROCE_F_IETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_LAST | ROCE_F_SEND),
    OP(ATOMIC_WRITE, ROCE_F_RETH | ROCE_F_PAYLOAD | ROCE_F_FIRST |
       ROCE_F_LAST | ROCE_F_WRITE),
};

#undef OP

uint16_t roce_opcode_flags(uint8_t opcode)
{
    switch (ROCE_OPCODE_CLASS(opcode)) {
    case ROCE_CLASS_RC:
        return roce_rc_flags[opcode & 0x1f];
    case ROCE_CLASS_UC:
        /* UC has SEND and WRITE only, numbered as in RC */
        if ((opcode & 0x1f) <= (ROCE_RC_WRITE_ONLY_IMM & 0x1f)) {
            return roce_rc_flags[opcode & 0x1f];
        }
        return 0;
    case ROCE_CLASS_UD:
        if (opcode == ROCE_UD_SEND_ONLY) {
            return ROCE_F_DETH | ROCE_F_PAYLOAD | ROCE_F_FIRST | ROCE_F_LAST |
                   ROCE_F_SEND | ROCE_F_VALID;
        }
        if (opcode == ROCE_UD_SEND_ONLY_IMM) {
            return ROCE_F_DETH | ROCE_F_IMMDT | ROCE_F_PAYLOAD |
                   ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_SEND | ROCE_F_VALID;
        }
        return 0;
    default:
        return 0;
    }
}

/* Bytes of extension headers after the BTH, in wire order. */
unsigned roce_ext_len(uint16_t flags)
{
    return (flags & ROCE_F_DETH ? ROCE_DETH_LEN : 0) +
           (flags & ROCE_F_RETH ? ROCE_RETH_LEN : 0) +
           (flags & ROCE_F_AETH ? ROCE_AETH_LEN : 0) +
           (flags & ROCE_F_ATMETH ? ROCE_ATMETH_LEN : 0) +
           (flags & ROCE_F_ATMACK ? ROCE_ATMACK_LEN : 0) +
           (flags & ROCE_F_IMMDT ? ROCE_IMMDT_LEN : 0) +
           (flags & ROCE_F_IETH ? ROCE_IETH_LEN : 0);
}

bool roce_gid_is_v4mapped(const uint8_t *gid)
{
    static const uint8_t prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
    };

    return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * Building
 */

uint8_t *roce_frame_put(RoceFrame *f, unsigned n)
{
    uint8_t *p = f->data + f->len;

    f->len += n;
    return p;
}

void roce_put_u32(RoceFrame *f, uint32_t val)
{
    stl_be_p(roce_frame_put(f, 4), val);
}

void roce_put_u64(RoceFrame *f, uint64_t val)
{
    stq_be_p(roce_frame_put(f, 8), val);
}

void roce_frame_start(RoceFrame *f, const RocePath *p, uint8_t opcode,
                      bool se, bool ackreq, uint32_t dqpn, uint32_t psn)
{
    uint8_t *h;

    f->len = 0;
    f->ipv6 = p->ipv6;
    h = roce_frame_put(f, ROCE_ETH_LEN);
    memcpy(h, p->dmac, 6);
    memcpy(h + 6, p->smac, 6);
    stw_be_p(h + 12, p->ipv6 ? 0x86dd : 0x0800);

    f->l3 = f->len;
    if (p->ipv6) {
        h = roce_frame_put(f, ROCE_IPV6_LEN);
        stl_be_p(h, 6u << 28 | (uint32_t)p->tclass << 20 |
                 (p->flow_label & 0xfffff));
        /* payload length: roce_frame_finish() */
        h[6] = 17;              /* UDP */
        h[7] = p->hop_limit;
        memcpy(h + 8, p->sip, 16);
        memcpy(h + 24, p->dip, 16);
    } else {
        h = roce_frame_put(f, ROCE_IPV4_LEN);
        memset(h, 0, ROCE_IPV4_LEN);
        h[0] = 0x45;
        h[1] = p->tclass;
        stw_be_p(h + 6, 0x4000);        /* DF */
        h[8] = p->hop_limit;
        h[9] = 17;                      /* UDP */
        memcpy(h + 12, p->sip + 12, 4);
        memcpy(h + 16, p->dip + 12, 4);
    }
    h = roce_frame_put(f, ROCE_UDP_LEN);
    stw_be_p(h, p->sport);
    stw_be_p(h + 2, ROCE_UDP_PORT);
    stw_be_p(h + 6, 0);                 /* no UDP checksum */

    f->bth = f->len;
    h = roce_frame_put(f, ROCE_BTH_LEN);
    h[0] = opcode;
    h[1] = (se ? 0x80 : 0);             /* M = 0, pad later, TVer 0 */
    stw_be_p(h + 2, ROCE_DEFAULT_PKEY);
    stl_be_p(h + 4, dqpn & ROCE_QPN_MASK);
    stl_be_p(h + 8, (ackreq ? 0x80000000u : 0) | (psn & ROCE_PSN_MASK));
}

void roce_put_reth(RoceFrame *f, uint64_t va, uint32_t rkey, uint32_t len)
{
    roce_put_u64(f, va);
    roce_put_u32(f, rkey);
    roce_put_u32(f, len);
}

void roce_put_aeth(RoceFrame *f, uint8_t syndrome, uint32_t msn)
{
    roce_put_u32(f, (uint32_t)syndrome << 24 | (msn & 0xffffff));
}

void roce_put_atmeth(RoceFrame *f, uint64_t va, uint32_t rkey,
                     uint64_t swap_add, uint64_t compare)
{
    roce_put_u64(f, va);
    roce_put_u32(f, rkey);
    roce_put_u64(f, swap_add);
    roce_put_u64(f, compare);
}

static uint16_t roce_ipv4_checksum(const uint8_t *h)
{
    uint32_t sum = 0;

    for (int i = 0; i < ROCE_IPV4_LEN; i += 2) {
        sum += lduw_be_p(h + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}

#ifdef HOST_X86_64
/*
 * CRC-32 (the reflected IEEE polynomial zlib uses) with carry-less
 * multiplication: folds 64 bytes per step, then 16, then reduces 128 bits
 * to 32 (Barrett).  The constants are x^n mod P(x) for the fold distances
 * (bit-reflected, shifted by one), as in Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ".  crc is the raw register (zlib's
 * value inverted); len is a multiple of 16, at least 64.
 */
static __attribute__((target("pclmul,sse4.1")))
uint32_t roce_crc32_clmul(uint32_t crc, const uint8_t *p, size_t len)
{
    const __m128i k12 = _mm_set_epi64x(0x01c6e41596ull, 0x0154442bd4ull);
    const __m128i k34 = _mm_set_epi64x(0x00ccaa009eull, 0x01751997d0ull);
    const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124ull);
    const __m128i poly = _mm_set_epi64x(0x01f7011641ull, 0x01db710641ull);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0, x1, x2, x3, t;

#define FOLD(x, k, next)                                                \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00),   \
                                _mm_clmulepi64_si128((x), (k), 0x11)),  \
                  (next))

    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
                       _mm_cvtsi32_si128(crc));
    x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    len -= 64;
    while (len >= 64) {
        x0 = FOLD(x0, k12, _mm_loadu_si128((const __m128i *)p));
        x1 = FOLD(x1, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = FOLD(x2, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = FOLD(x3, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        len -= 64;
    }
    x0 = FOLD(x0, k34, x1);
    x0 = FOLD(x0, k34, x2);
    x0 = FOLD(x0, k34, x3);
    while (len >= 16) {
        x0 = FOLD(x0, k34, _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
#undef FOLD
    /* 128 -> 64 bits, appending 32 zero bits */
    t = _mm_clmulepi64_si128(x0, k34, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    /* 64 -> 32 bits */
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    /* Barrett reduction */
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    return _mm_extract_epi32(_mm_xor_si128(x0, t), 1);
}
#endif

/* zlib-compatible crc32(), faster where the CPU can multiply carry-less. */
static uLong roce_crc32(uLong crc, const uint8_t *p, size_t len)
{
#ifdef HOST_X86_64
    static int have_clmul = -1;

    if (have_clmul < 0) {
        have_clmul = __builtin_cpu_supports("pclmul") &&
                     __builtin_cpu_supports("sse4.1");
    }
    if (have_clmul && len >= 64) {
        size_t n = len & ~(size_t)15;

        crc = ~roce_crc32_clmul(~crc, p, n) & 0xffffffffu;
        p += n;
        len -= n;
    }
#endif
    return len ? crc32(crc, p, len) : crc;
}

/* CRC of everything the ICRC covers in [l3, end) of a frame. */
static uint32_t roce_icrc(const uint8_t *data, unsigned l3, unsigned bth,
                          unsigned end, bool ipv6)
{
    static const uint8_t lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    uint8_t pseudo[ROCE_IPV6_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN];
    unsigned plen = bth + ROCE_BTH_LEN - l3;
    uint8_t *udp = pseudo + (ipv6 ? ROCE_IPV6_LEN : ROCE_IPV4_LEN);
    uLong crc;

    memcpy(pseudo, data + l3, plen);
    if (ipv6) {
        pseudo[0] |= 0x0f;              /* traffic class and flow label */
        pseudo[1] = 0xff;
        pseudo[2] = 0xff;
        pseudo[3] = 0xff;
        pseudo[7] = 0xff;               /* hop limit */
    } else {
        pseudo[1] = 0xff;               /* TOS */
        pseudo[8] = 0xff;               /* TTL */
        pseudo[10] = 0xff;              /* header checksum */
        pseudo[11] = 0xff;
    }
    udp[6] = 0xff;                      /* UDP checksum */
    udp[7] = 0xff;
    udp[ROCE_UDP_LEN + 4] = 0xff;       /* BTH reserved byte */

    crc = crc32(0, lrh, sizeof(lrh));
    crc = crc32(crc, pseudo, plen);
    crc = roce_crc32(crc, data + bth + ROCE_BTH_LEN,
                     end - (bth + ROCE_BTH_LEN));
    return crc;
}

/* Pad the payload, fill the lengths and checksums, append the ICRC. */
void roce_frame_finish(RoceFrame *f, unsigned paylen)
{
    unsigned pad = -paylen & 3;
    uint8_t *h;

    memset(roce_frame_put(f, pad), 0, pad);
    f->data[f->bth + 1] |= pad << 4;
    roce_frame_put(f, ROCE_ICRC_LEN);   /* reserve before lengths */

    h = f->data + f->l3;
    if (f->ipv6) {
        stw_be_p(h + 4, f->len - f->l3 - ROCE_IPV6_LEN);
        stw_be_p(h + ROCE_IPV6_LEN + 4, f->len - f->l3 - ROCE_IPV6_LEN);
    } else {
        stw_be_p(h + 2, f->len - f->l3);
        stw_be_p(h + ROCE_IPV4_LEN + 4, f->len - f->l3 - ROCE_IPV4_LEN);
        stw_be_p(h + 10, 0);
        stw_be_p(h + 10, roce_ipv4_checksum(h));
    }
    stl_le_p(f->data + f->len - ROCE_ICRC_LEN,
             roce_icrc(f->data, f->l3, f->bth, f->len - ROCE_ICRC_LEN,
                       f->ipv6));
}

/*
 * Parsing
 */

static void roce_parse_ext(const uint8_t *p, RocePkt *pkt)
{
    uint16_t fl = pkt->flags;

    if (fl & ROCE_F_DETH) {
        pkt->qkey = ldl_be_p(p);
        pkt->src_qpn = ldl_be_p(p + 4) & ROCE_QPN_MASK;
        p += ROCE_DETH_LEN;
    }
    if (fl & ROCE_F_RETH) {
        pkt->va = ldq_be_p(p);
        pkt->rkey = ldl_be_p(p + 8);
        pkt->dma_len = ldl_be_p(p + 12);
        p += ROCE_RETH_LEN;
    }
    if (fl & ROCE_F_AETH) {
        pkt->syndrome = p[0];
        pkt->msn = ldl_be_p(p) & 0xffffff;
        p += ROCE_AETH_LEN;
    }
    if (fl & ROCE_F_ATMETH) {
        pkt->va = ldq_be_p(p);
        pkt->rkey = ldl_be_p(p + 8);
        pkt->swap_add = ldq_be_p(p + 12);
        pkt->compare = ldq_be_p(p + 20);
        p += ROCE_ATMETH_LEN;
    }
    if (fl & ROCE_F_ATMACK) {
        pkt->orig = ldq_be_p(p);
        p += ROCE_ATMACK_LEN;
    }
    if (fl & ROCE_F_IMMDT) {
        memcpy(&pkt->imm, p, 4);
        p += ROCE_IMMDT_LEN;
    }
    if (fl & ROCE_F_IETH) {
        pkt->inv_rkey = ldl_be_p(p);
    }
}

/*
 * Parse an Ethernet frame.  Everything is bounds-checked: the frame comes
 * from the network and may be anything.
 */
enum roce_parse_result roce_parse(const uint8_t *frame, size_t len,
                                  RocePkt *pkt)
{
    static const uint8_t v4_prefix[12] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
    };
    unsigned l3 = ROCE_ETH_LEN, l4, bth, end, ext, hdr_end;
    uint16_t ethertype, udp_len;
    const uint8_t *h;

    memset(pkt, 0, sizeof(*pkt));
    if (len < ROCE_ETH_LEN || len > 65535) {
        return ROCE_NOT_ROCE;
    }
    memcpy(pkt->smac, frame + 6, 6);
    ethertype = lduw_be_p(frame + 12);
    h = frame + l3;
    pkt->l3 = h;
    if (ethertype == 0x0800) {
        unsigned tot;

        if (len < l3 + ROCE_IPV4_LEN || (h[0] >> 4) != 4 || h[9] != 17) {
            return ROCE_NOT_ROCE;
        }
        l4 = l3 + (h[0] & 0xf) * 4;
        if (len < l4 + ROCE_UDP_LEN ||
            lduw_be_p(frame + l4 + 2) != ROCE_UDP_PORT) {
            return ROCE_NOT_ROCE;
        }
        /* RoCEv2 from here on: malformed packets are dropped */
        tot = lduw_be_p(h + 2);
        if ((h[0] & 0xf) != 5 || (lduw_be_p(h + 6) & 0x3fff) ||
            tot < ROCE_IPV4_LEN || l3 + tot > len) {
            return ROCE_MALFORMED;
        }
        end = l3 + tot;
        memcpy(pkt->sip, v4_prefix, 12);
        memcpy(pkt->sip + 12, h + 12, 4);
        memcpy(pkt->dip, v4_prefix, 12);
        memcpy(pkt->dip + 12, h + 16, 4);
    } else if (ethertype == 0x86dd) {
        if (len < l3 + ROCE_IPV6_LEN + ROCE_UDP_LEN || (h[0] >> 4) != 6 ||
            h[6] != 17) {
            return ROCE_NOT_ROCE;
        }
        l4 = l3 + ROCE_IPV6_LEN;
        if (lduw_be_p(frame + l4 + 2) != ROCE_UDP_PORT) {
            return ROCE_NOT_ROCE;
        }
        end = l4 + lduw_be_p(h + 4);
        if (end > len) {
            return ROCE_MALFORMED;
        }
        pkt->ipv6 = true;
        memcpy(pkt->sip, h + 8, 16);
        memcpy(pkt->dip, h + 24, 16);
    } else {
        return ROCE_NOT_ROCE;
    }

    udp_len = lduw_be_p(frame + l4 + 4);
    if (udp_len < ROCE_UDP_LEN || l4 + udp_len != end) {
        return ROCE_MALFORMED;
    }
    bth = l4 + ROCE_UDP_LEN;
    if (end < bth + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
        return ROCE_MALFORMED;
    }
    h = frame + bth;
    pkt->opcode = h[0];
    pkt->flags = roce_opcode_flags(pkt->opcode);
    pkt->se = h[1] & 0x80;
    pkt->pad = (h[1] >> 4) & 3;
    pkt->pkey = lduw_be_p(h + 2);
    pkt->dqpn = ldl_be_p(h + 4) & ROCE_QPN_MASK;
    pkt->ackreq = h[8] & 0x80;
    pkt->psn = ldl_be_p(h + 8) & ROCE_PSN_MASK;
    if (!(pkt->flags & ROCE_F_VALID) || (h[1] & 0x0f) != 0) {
        return ROCE_MALFORMED;          /* unknown opcode or TVer != 0 */
    }
    ext = roce_ext_len(pkt->flags);
    hdr_end = bth + ROCE_BTH_LEN + ext;
    if (end < hdr_end + pkt->pad + ROCE_ICRC_LEN) {
        return ROCE_MALFORMED;
    }
    if (ldl_le_p(frame + end - ROCE_ICRC_LEN) !=
        roce_icrc(frame, l3, bth, end - ROCE_ICRC_LEN, pkt->ipv6)) {
        return ROCE_BAD_ICRC;
    }
    roce_parse_ext(frame + bth + ROCE_BTH_LEN, pkt);
    pkt->payload = frame + hdr_end;
    pkt->paylen = end - ROCE_ICRC_LEN - pkt->pad - hdr_end;
    if (pkt->paylen && !(pkt->flags & ROCE_F_PAYLOAD)) {
        return ROCE_MALFORMED;
    }
    if (pkt->paylen > ROCE_MAX_PAYLOAD) {
        return ROCE_MALFORMED;
    }
    return ROCE_OK;
}
