/* core: roce.c */
/*
 * Unit tests of the device core's RoCEv2 wire format (hw/rdma-sim/roce.c),
 * built plain: glib and zlib, no QEMU (scripts/check.sh, suite unit).
 *
 * The ICRC is checked against frames Linux's Soft-RoCE sent, so the core's
 * CRC (carry-less multiplication for long payloads, zlib for the rest) is
 * checked against another implementation.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "roce.h"

/*
 * Two frames Soft-RoCE (rdma_rxe, Debian 6.1) sent during an
 * ibv_rc_pingpong between 10.0.0.1 (52:54:00:5e:00:01) and 10.0.0.2
 * (52:54:00:5e:00:02), captured with QEMU's filter-dump: an ACK of PSN
 * 0x6f0400 (MSN 1) to QP 0x11, and a SEND_LAST of 952 bytes of 0x7b.
 */
static const uint8_t rxe_ack[62] = {
    0x52, 0x54, 0x00, 0x5e, 0x00, 0x02, 0x52, 0x54, 0x00, 0x5e, 0x00, 0x01,
    0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x67, 0x73, 0x40, 0x00, 0x40, 0x11,
    0xbf, 0x47, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x21,
    0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
    0x00, 0x11, 0x00, 0x6f, 0x04, 0x00, 0x1f, 0x00, 0x00, 0x01, 0xef, 0x51,
    0xe4, 0x2a,
};

#define RXE_SEND_LAST_LEN 1010

static void rxe_send_last(uint8_t *f)
{
    static const uint8_t hdr[54] = {
        0x52, 0x54, 0x00, 0x5e, 0x00, 0x01, 0x52, 0x54, 0x00, 0x5e, 0x00, 0x02,
        0x08, 0x00, 0x45, 0x00, 0x03, 0xe4, 0x75, 0xe6, 0x40, 0x00, 0x40, 0x11,
        0xad, 0x20, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0xc1, 0x21,
        0x12, 0xb7, 0x03, 0xd0, 0x00, 0x00, 0x02, 0x00, 0xff, 0xff, 0x00, 0x00,
        0x00, 0x11, 0x80, 0x6f, 0x04, 0x00,
    };
    static const uint8_t icrc[4] = { 0x1d, 0x9e, 0x49, 0xdf };

    memcpy(f, hdr, sizeof(hdr));
    memset(f + sizeof(hdr), 0x7b, RXE_SEND_LAST_LEN - sizeof(hdr) - 4);
    memcpy(f + RXE_SEND_LAST_LEN - 4, icrc, 4);
}

/* Soft-RoCE's frames parse, with the fields it put in them. */
static void test_rxe_frames(void)
{
    uint8_t f[RXE_SEND_LAST_LEN];
    RocePkt pkt;

    g_assert_cmpint(roce_parse(rxe_ack, sizeof(rxe_ack), &pkt), ==, ROCE_OK);
    g_assert_cmphex(pkt.opcode, ==, ROCE_RC_ACK);
    g_assert_cmphex(pkt.dqpn, ==, 0x11);
    g_assert_cmphex(pkt.psn, ==, 0x6f0400);
    g_assert_cmphex(pkt.syndrome, ==,
                    ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID);
    g_assert_cmpuint(pkt.msn, ==, 1);
    g_assert_cmpuint(pkt.paylen, ==, 0);
    g_assert_false(pkt.ipv6);
    g_assert_cmpmem(pkt.sip + 12, 4, rxe_ack + 26, 4);

    rxe_send_last(f);
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_OK);
    g_assert_cmphex(pkt.opcode, ==, ROCE_RC_SEND_LAST);
    g_assert_true(pkt.ackreq);
    g_assert_cmpuint(pkt.paylen, ==, 952);
    g_assert_true(pkt.payload == f + 54);
    g_assert_cmphex(pkt.payload[951], ==, 0x7b);

    /* one bit of payload, or of a header the ICRC covers, changed */
    f[500] ^= 1;
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_BAD_ICRC);
    f[500] ^= 1;
    f[42 + 7] ^= 0x10;                  /* destination QP */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_BAD_ICRC);
    f[42 + 7] ^= 0x10;
    /* fields routers change are not covered: TTL (and its checksum) */
    f[22] = 3;
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_OK);
}

/* Which headers each opcode carries (IBTA 9.2, table 38). */
static void test_opcode_headers(void)
{
    static const struct {
        uint8_t opcode;
        unsigned ext;
        uint16_t kind;
    } ops[] = {
        { ROCE_RC_SEND_ONLY, 0, ROCE_F_SEND },
        { ROCE_RC_SEND_ONLY_IMM, ROCE_IMMDT_LEN, ROCE_F_SEND },
        { ROCE_RC_SEND_ONLY_INV, ROCE_IETH_LEN, ROCE_F_SEND },
        { ROCE_RC_WRITE_FIRST, ROCE_RETH_LEN, ROCE_F_WRITE },
        { ROCE_RC_WRITE_MIDDLE, 0, ROCE_F_WRITE },
        { ROCE_RC_WRITE_ONLY_IMM, ROCE_RETH_LEN + ROCE_IMMDT_LEN,
          ROCE_F_WRITE },
        { ROCE_RC_READ_REQUEST, ROCE_RETH_LEN, ROCE_F_READ },
        { ROCE_RC_READ_RESP_FIRST, ROCE_AETH_LEN, ROCE_F_RESP },
        { ROCE_RC_READ_RESP_MIDDLE, 0, ROCE_F_RESP },
        { ROCE_RC_ACK, ROCE_AETH_LEN, ROCE_F_RESP },
        { ROCE_RC_ATOMIC_ACK, ROCE_AETH_LEN + ROCE_ATMACK_LEN, ROCE_F_RESP },
        { ROCE_RC_CMP_SWAP, ROCE_ATMETH_LEN, ROCE_F_ATOMIC },
        { ROCE_RC_ATOMIC_WRITE, ROCE_RETH_LEN, ROCE_F_WRITE },
        { ROCE_UC_BASE | ROCE_RC_WRITE_ONLY, ROCE_RETH_LEN, ROCE_F_WRITE },
        { ROCE_UD_SEND_ONLY, ROCE_DETH_LEN, ROCE_F_SEND },
        { ROCE_UD_SEND_ONLY_IMM, ROCE_DETH_LEN + ROCE_IMMDT_LEN, ROCE_F_SEND },
    };
    /* reserved in RC, or not in UC / UD */
    static const uint8_t invalid[] = {
        0x15, 0x18, 0x1c, 0x1e, 0x1f, ROCE_UC_BASE | ROCE_RC_READ_REQUEST,
        ROCE_UC_BASE | ROCE_RC_ACK, 0x60, 0x66, 0x40, 0x80, 0xff,
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(ops); i++) {
        uint16_t fl = roce_opcode_flags(ops[i].opcode);

        g_assert_true(fl & ROCE_F_VALID);
        g_assert_cmpuint(roce_ext_len(fl), ==, ops[i].ext);
        g_assert_cmphex(fl & (ROCE_F_SEND | ROCE_F_WRITE | ROCE_F_READ |
                              ROCE_F_ATOMIC | ROCE_F_RESP), ==, ops[i].kind);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(invalid); i++) {
        g_assert_false(roce_opcode_flags(invalid[i]) & ROCE_F_VALID);
    }
}

static void path_init(RocePath *p, bool ipv6)
{
    static const uint8_t v4[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1,
    };

    memset(p, 0, sizeof(*p));
    memcpy(p->smac, "\x52\x54\x00\x5e\x00\x01", 6);
    memcpy(p->dmac, "\x52\x54\x00\x5e\x00\x02", 6);
    if (ipv6) {
        for (unsigned i = 0; i < 16; i++) {
            p->sip[i] = 0xfe - i;
            p->dip[i] = 0x20 + i;
        }
        p->flow_label = 0x12345;
    } else {
        memcpy(p->sip, v4, 16);
        memcpy(p->dip, v4, 16);
        p->dip[15] = 2;
    }
    p->ipv6 = ipv6;
    p->tclass = 0x10;
    p->hop_limit = 64;
    p->sport = 0xc121;
}

/*
 * Frames the core builds parse back to what went in, for both IP versions
 * and payloads of 0 to 80 bytes (every pad) and larger ones to 3643; the
 * IPv4 header checksum sums to all ones.
 */
static void test_round_trip(void)
{
    RoceFrame *f = g_new(RoceFrame, 1);
    RocePath path;
    RocePkt pkt;

    for (int v6 = 0; v6 < 2; v6++) {
        path_init(&path, v6);
        for (unsigned n = 0; n <= ROCE_MAX_PAYLOAD; n += n < 80 ? 1 : 509) {
            uint8_t *pay;

            roce_frame_start(f, &path, ROCE_RC_WRITE_ONLY_IMM, true, true,
                             0xabcdef, 0xfffffe + n);
            roce_put_reth(f, 0x1122334455667788ull, 0xcafe, n);
            roce_put_u32(f, 0x01020304);
            pay = roce_frame_put(f, n);
            for (unsigned i = 0; i < n; i++) {
                pay[i] = i * 7 + n;
            }
            roce_frame_finish(f, n);
            g_assert_cmpuint(f->len % 2, ==, 0);
            g_assert_cmpint(roce_parse(f->data, f->len, &pkt), ==, ROCE_OK);
            g_assert_cmpint(pkt.ipv6, ==, v6);
            g_assert_cmphex(pkt.opcode, ==, ROCE_RC_WRITE_ONLY_IMM);
            g_assert_true(pkt.se && pkt.ackreq);
            g_assert_cmphex(pkt.dqpn, ==, 0xabcdef);
            g_assert_cmphex(pkt.psn, ==, roce_psn_add(0xfffffe, n));
            g_assert_cmphex(pkt.pkey, ==, ROCE_DEFAULT_PKEY);
            g_assert_cmphex(pkt.va, ==, 0x1122334455667788ull);
            g_assert_cmphex(pkt.rkey, ==, 0xcafe);
            g_assert_cmpuint(pkt.dma_len, ==, n);
            g_assert_cmphex(GUINT32_FROM_BE(pkt.imm), ==, 0x01020304);
            g_assert_cmpuint(pkt.pad, ==, -n & 3);
            g_assert_cmpmem(pkt.payload, pkt.paylen, pay, n);
            g_assert_cmpmem(pkt.sip, 16, path.sip, 16);
            g_assert_cmpmem(pkt.dip, 16, path.dip, 16);
            g_assert_cmpmem(pkt.smac, 6, path.smac, 6);
            if (!v6) {
                uint32_t sum = 0;

                for (unsigned i = 0; i < ROCE_IPV4_LEN; i += 2) {
                    sum += lduw_be_p(f->data + ROCE_ETH_LEN + i);
                }
                sum = (sum & 0xffff) + (sum >> 16);
                g_assert_cmphex(sum, ==, 0xffff);
            }
        }
    }
    g_free(f);
}

/* What is not RoCEv2 goes to the Ethernet device; broken RoCEv2 drops. */
static void test_not_roce(void)
{
    uint8_t f[sizeof(rxe_ack)];
    RocePkt pkt;

    memcpy(f, rxe_ack, sizeof(f));
    f[12] = 0x08, f[13] = 0x06;         /* ARP */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_NOT_ROCE);
    memcpy(f, rxe_ack, sizeof(f));
    f[23] = 6;                          /* TCP */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_NOT_ROCE);
    memcpy(f, rxe_ack, sizeof(f));
    f[37] = 0xb8;                       /* UDP port 4792 */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_NOT_ROCE);
    g_assert_cmpint(roce_parse(f, 13, &pkt), ==, ROCE_NOT_ROCE);

    memcpy(f, rxe_ack, sizeof(f));
    f[21] = 0x01;                       /* a fragment: offset 8 */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_MALFORMED);
    memcpy(f, rxe_ack, sizeof(f));
    f[17] += 1;                         /* IP length beyond the frame */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_MALFORMED);
    memcpy(f, rxe_ack, sizeof(f));
    f[39] -= 4;                         /* UDP length short of the IP's */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_MALFORMED);
    memcpy(f, rxe_ack, sizeof(f));
    f[42] = 0x1f;                       /* reserved opcode */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_MALFORMED);
    memcpy(f, rxe_ack, sizeof(f));
    f[43] = 0x01;                       /* transport version 1 */
    g_assert_cmpint(roce_parse(f, sizeof(f), &pkt), ==, ROCE_MALFORMED);
}

/* A payload beyond the largest MTU (4096) is dropped, however well made. */
static void test_too_long(void)
{
    RoceFrame *f = g_new0(RoceFrame, 1);
    RocePath path;
    RocePkt pkt;

    path_init(&path, false);
    for (unsigned n = ROCE_MAX_PAYLOAD; n <= ROCE_MAX_PAYLOAD + 4; n += 4) {
        roce_frame_start(f, &path, ROCE_RC_SEND_ONLY, false, false, 0x11, 0);
        roce_frame_put(f, n);
        roce_frame_finish(f, n);
        g_assert_cmpint(roce_parse(f->data, f->len, &pkt), ==,
                        n == ROCE_MAX_PAYLOAD ? ROCE_OK : ROCE_MALFORMED);
    }
    g_free(f);
}

/*
 * Frames from the network may be anything: a million mutations of valid
 * frames (lengths, bytes, truncation) parse to some result without reading
 * outside the frame (the suite runs under AddressSanitizer), and a frame
 * parsed as RoCEv2 has its payload inside it.  A fixed seed: the same
 * frames every run.
 */
static void test_hostile(void)
{
    GRand *r = g_rand_new_with_seed(0x5eed);
    RoceFrame *f = g_new(RoceFrame, 1);
    RocePath path;
    RocePkt pkt;
    unsigned ok = 0;

    for (unsigned i = 0; i < 1000000; i++) {
        unsigned len, flips = g_rand_int_range(r, 0, 4);
        uint8_t *buf;

        path_init(&path, i & 1);
        roce_frame_start(f, &path, g_rand_int_range(r, 0, 0x100), false,
                         true, 0x11, i);
        roce_frame_put(f, g_rand_int_range(r, 0, 64));
        roce_frame_finish(f, 0);
        len = f->len;
        for (unsigned k = 0; k < flips; k++) {
            f->data[g_rand_int_range(r, 0, len)] = g_rand_int(r);
        }
        if (g_rand_boolean(r)) {
            len = g_rand_int_range(r, 0, len + 1);
        }
        /* a copy of exactly len bytes: ASan sees a read past it */
        buf = g_memdup2(f->data, len);
        if (roce_parse(buf, len, &pkt) == ROCE_OK) {
            ok++;
            g_assert_true(pkt.payload >= buf &&
                          pkt.payload + pkt.paylen <= buf + len);
        }
        g_free(buf);
    }
    /* some of them were valid, not every one */
    g_assert_cmpuint(ok, >, 1000);
    g_assert_cmpuint(ok, <, 1000000);
    g_free(f);
    g_rand_free(r);
}

/* PSNs are 24 bits: they wrap, and compare within half the space. */
static void test_psn(void)
{
    g_assert_cmphex(roce_psn_add(0xffffff, 1), ==, 0);
    g_assert_cmphex(roce_psn_add(0xfffffe, 5), ==, 3);
    g_assert_cmpint(roce_psn_cmp(3, 0xfffffe), ==, 5);
    g_assert_cmpint(roce_psn_cmp(0xfffffe, 3), ==, -5);
    g_assert_cmpint(roce_psn_cmp(0x123, 0x123), ==, 0);
    g_assert_cmpint(roce_psn_cmp(0x7fffff, 0), ==, 0x7fffff);
    g_assert_cmpint(roce_psn_cmp(0x800000, 0), ==, -0x800000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/roce/rxe-frames", test_rxe_frames);
    g_test_add_func("/roce/opcode-headers", test_opcode_headers);
    g_test_add_func("/roce/round-trip", test_round_trip);
    g_test_add_func("/roce/not-roce", test_not_roce);
    g_test_add_func("/roce/too-long", test_too_long);
    g_test_add_func("/roce/hostile", test_hostile);
    g_test_add_func("/roce/psn", test_psn);
    return g_test_run();
}
