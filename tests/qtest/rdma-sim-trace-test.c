/*
 * QTest testcase for the rdma-sim RDMA NIC: the trace events
 * docs/tracing.md shows, as its recipes
 * enable them: a loopback SEND traced with -trace 'rdma_sim_*' shows the
 * commands that set the pair up, the QP state changes, the doorbell, each
 * packet sent and received with its opcode, QP and PSN, and the
 * completion; following one QP picks its lines out.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

/* The lines of log that contain all of the given words, in order. */
static unsigned count_lines(char **lines, const char *a, const char *b)
{
    unsigned n = 0;

    for (char **l = lines; *l; l++) {
        const char *p = strstr(*l, a);

        if (p && (!b || strstr(p + strlen(a), b))) {
            n++;
        }
    }
    return n;
}

static void test_trace_send(const char *machine)
{
    g_autofree char *log = g_strdup_printf("%s/rdma-sim-trace.XXXXXX",
                                           g_get_tmp_dir());
    g_autofree char *args = NULL;
    g_autofree char *text = NULL;
    g_autofree char *want = NULL;
    g_auto(GStrv) lines = NULL;
    QSimPair p;
    QSimWr wr = {
        .wr_id = 0x77,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    struct rsim_sge rsge;
    struct rsim_cqe cqe;
    uint32_t a, b, psn;
    int fd = g_mkstemp(log);

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    /* the recipe of docs/tracing.md */
    args = g_strdup_printf("-trace 'rdma_sim_*' -D %s", log);
    qsim_pair_start(&p, machine, &(QSimPairConf){ .args = args });
    a = p.a.qp.qpn;
    b = p.b.qp.qpn;
    psn = 0xfffff0 + a % 8;         /* A's first PSN (qsim_pair_start) */
    rsge = qsim_sge(&p.mb, 0, 4096);
    qsim_post_recv(p.d, &p.b.qp.rq, 0x88, &rsge);
    wr.sge[0] = qsim_sge(&p.ma, 0, 2500);   /* 3 packets at MTU 1024 */
    qsim_send(p.d, &p.a.qp, &wr);
    qsim_cq_expect(p.d, &p.a.scq, 0x77, RSIM_WC_SUCCESS, RSIM_WC_SEND, 2500,
                   a);
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    qsim_cqe_check(&cqe, 0x88, RSIM_WC_SUCCESS, RSIM_WC_RECV, 2500, b);
    qsim_stop(p.d);

    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    unlink(log);
    lines = g_strsplit(text, "\n", -1);
    /* commands by name, with their outcome */
    g_assert_cmpuint(count_lines(lines, "rdma_sim_cmd ", "CREATE_QP ok"), ==,
                     2);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_cmd ", "MODIFY_QP ok"), ==,
                     6);
    /* A's state machine */
    want = g_strdup_printf("QP %u RESET -> INIT", a);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_qp_state ", want), ==, 1);
    g_free(want);
    want = g_strdup_printf("QP %u RTR -> RTS", a);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_qp_state ", want), ==, 1);
    g_free(want);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_doorbell ", NULL), ==, 1);
    /* SEND_FIRST, MIDDLE, LAST from A to B, PSN by PSN, and B's ACK */
    want = g_strdup_printf("tx to QP %u opcode 0x00 PSN %u ", b, psn);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_tx_packet ", want), ==, 1);
    g_free(want);
    want = g_strdup_printf("tx to QP %u opcode 0x01 PSN %u ", b, psn + 1);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_tx_packet ", want), ==, 1);
    g_free(want);
    want = g_strdup_printf("tx to QP %u opcode 0x02 PSN %u ", b, psn + 2);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_tx_packet ", want), ==, 1);
    g_free(want);
    want = g_strdup_printf("tx to QP %u opcode 0x11 ", a);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_tx_packet ", want), >=, 1);
    g_free(want);
    want = g_strdup_printf("QP %u rx opcode 0x02 PSN %u payload %u", b,
                           psn + 2, 2500 - 2 * 1024);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_rx_packet ", want), ==, 1);
    g_free(want);
    /* the two completions */
    want = g_strdup_printf("QP %u opcode %u status 0 length 2500", b,
                           RSIM_WC_RECV);
    g_assert_cmpuint(count_lines(lines, "rdma_sim_cqe ", want), ==, 1);
}

static const QSimTest tests[] = {
    { "trace/send", test_trace_send, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
