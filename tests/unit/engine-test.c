/* core: all */
/*
 * Unit tests of the device core as a whole, built plain (every core file,
 * on the unit tests' host): the engine's receive path, up to the QP a
 * frame is for, with frames from the network, which may be anything (a
 * device with QPs: rc-test.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "host.h"
#include "roce.h"

#define MEM_SIZE        (1 * MiB)

/* A SEND_ONLY from 10.0.0.1 to the device (10.0.0.<to>), QP dqpn */
static void build_send(RoceFrame *f, uint8_t to, uint32_t dqpn, uint32_t psn)
{
    RocePath p = { .hop_limit = 64, .sport = 0xc000 };

    memcpy(p.smac, "\x52\x54\x00\x5e\x00\x01", 6);
    memcpy(p.dmac, "\x52\x54\x00\x5e\x00\x02", 6);
    p.sip[10] = p.sip[11] = p.dip[10] = p.dip[11] = 0xff;
    p.sip[12] = p.dip[12] = 10;
    p.sip[15] = 1;
    p.dip[15] = to;
    roce_frame_start(f, &p, ROCE_RC_SEND_ONLY, false, true, dqpn, psn);
    memset(roce_frame_put(f, 64), 0x5a, 64);
    roce_frame_finish(f, 64);
}

static uint64_t stat(RdmaSimState *s, unsigned i)
{
    return s->stats[i];
}

/*
 * The engine's receive handler takes RoCEv2 frames for its GIDs and counts
 * each: one for a QP that does not exist is dropped (rx_drop_no_qp), one
 * with a bad ICRC too (rx_icrc_errors); frames for another address are
 * left to the Ethernet port; the device sends nothing back.
 */
static void test_rx_counted(void)
{
    RdmaSimState *s = unit_core_ready(MEM_SIZE, 2);
    RoceFrame f;

    build_send(&f, 2, 0x11, 0);
    g_assert_true(s->roce_rx(s, f.data, f.len));
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_ROCE_PKTS), ==, 1);
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_DROP_NO_QP), ==, 1);
    f.data[f.len - 30] ^= 0x80;
    g_assert_true(s->roce_rx(s, f.data, f.len));
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_ICRC_ERR), ==, 1);

    build_send(&f, 3, 0x11, 0);
    g_assert_false(s->roce_rx(s, f.data, f.len));
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_ROCE_PKTS), ==, 1);

    unit_run_bhs();
    unit_clock_advance(1000 * SCALE_MS);
    g_assert_cmpuint(unit_host(s)->sent->len, ==, 0);
    g_assert_cmpuint(unit_host(s)->guest_errors, ==, 0);
    unit_core_free(s);
}

/*
 * Garbage: 200000 frames, each a SEND to the device with up to 4 bytes
 * changed and maybe cut short.  Every frame the handler takes is counted
 * exactly once, as a packet, a bad ICRC or a malformed packet; nothing is
 * sent back and nothing is read outside a frame (AddressSanitizer).  A
 * fixed seed: the same frames every run.
 */
static void test_rx_garbage(void)
{
    RdmaSimState *s = unit_core_ready(MEM_SIZE, 2);
    GRand *r = g_rand_new_with_seed(0x6a7b);
    uint64_t taken = 0, counted;
    RoceFrame f;

    for (unsigned i = 0; i < 200000; i++) {
        unsigned len;
        uint8_t *buf;

        build_send(&f, 2, g_rand_int_range(r, 0, 20), i);
        for (int k = g_rand_int_range(r, 0, 5); k > 0; k--) {
            f.data[g_rand_int_range(r, 0, f.len)] = g_rand_int(r);
        }
        len = g_rand_int_range(r, 0, 4) ? f.len :
              (unsigned)g_rand_int_range(r, 0, f.len);
        buf = g_memdup2(f.data, len);
        taken += s->roce_rx(s, buf, len);
        g_free(buf);
    }
    unit_run_bhs();
    counted = stat(s, RSIM_STAT_RX_ROCE_PKTS) +
              stat(s, RSIM_STAT_RX_ICRC_ERR) +
              stat(s, RSIM_STAT_RX_DROP_MALFORMED);
    g_test_message("%" PRIu64 " frames taken: %" PRIu64 " packets, %"
                   PRIu64 " bad ICRC, %" PRIu64 " malformed", taken,
                   stat(s, RSIM_STAT_RX_ROCE_PKTS),
                   stat(s, RSIM_STAT_RX_ICRC_ERR),
                   stat(s, RSIM_STAT_RX_DROP_MALFORMED));
    g_assert_cmpuint(counted, ==, taken);
    g_assert_cmpuint(taken, >, 100000);
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_ROCE_PKTS), >, 1000);
    g_assert_cmpuint(stat(s, RSIM_STAT_RX_DROP_NO_QP), ==,
                     stat(s, RSIM_STAT_RX_ROCE_PKTS));
    g_assert_cmpuint(unit_host(s)->sent->len, ==, 0);
    g_rand_free(r);
    unit_core_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/engine/rx-counted", test_rx_counted);
    g_test_add_func("/engine/rx-garbage", test_rx_garbage);
    return g_test_run();
}
