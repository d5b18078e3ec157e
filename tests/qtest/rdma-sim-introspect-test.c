/*
 * QTest testcase for the rdma-sim RDMA NIC: the device's objects and
 * counters read through QMP's qom-get (hw/rdma-sim/introspect.c), as
 * scripts/rdma-sim-top reads them: a connected RC pair shows its PD, QPs,
 * CQs, MRs and EQ with the values the commands gave them, and a SEND moves
 * the PSNs, completion indexes and counters by what it sent.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

/* The element of list whose member key is val */
static QDict *find(QList *list, const char *key, uint64_t val)
{
    QListEntry *e;

    QLIST_FOREACH_ENTRY(list, e) {
        QDict *o = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(o, key) == val) {
            return o;
        }
    }
    g_assert_not_reached();
}

static QDict *member(QDict *o, const char *key)
{
    return qdict_get_qdict(o, key);
}

static void test_objects(const char *machine)
{
    QSimPair p;
    QSimWr wr = { .wr_id = 1, .opcode = RSIM_WR_SEND, .nsge = 1 };
    struct rsim_sge rsge;
    QObject *obj;
    QList *list;
    QDict *o, *port, *counters;
    uint32_t a, b, psn;

    qsim_pair_start(&p, machine,
                    &(QSimPairConf){ .props = "id=" QSIM_QOM_ID });
    a = p.a.qp.qpn;
    b = p.b.qp.qpn;
    psn = 0xfffff0 + a % 8;         /* A's first PSN (qsim_pair_start) */

    /* one PD, used by the two QPs and the two MRs */
    obj = qsim_qom_get(p.d, "pds");
    list = qobject_to(QList, obj);
    g_assert_cmpuint(qlist_size(list), ==, 1);
    o = find(list, "pdn", p.pdn);
    g_assert_cmpint(qdict_get_int(o, "refs"), ==, 4);
    qobject_unref(obj);

    obj = qsim_qom_get(p.d, "eqs");
    list = qobject_to(QList, obj);
    g_assert_cmpuint(qlist_size(list), ==, 1);
    o = find(list, "eqn", p.eq.eqn);
    g_assert_cmpint(qdict_get_int(o, "vector"), ==, 1);
    g_assert_cmpint(qdict_get_int(o, "depth"), ==, QSIM_PAIR_EQ_DEPTH);
    g_assert_cmpint(qdict_get_int(o, "refs"), ==, 4);
    qobject_unref(obj);

    obj = qsim_qom_get(p.d, "mrs");
    list = qobject_to(QList, obj);
    g_assert_cmpuint(qlist_size(list), ==, 2);
    o = find(list, "key", p.mb.lkey);
    g_assert_cmpstr(qdict_get_str(o, "kind"), ==, "user");
    g_assert_true(qdict_get_bool(o, "valid"));
    g_assert_cmpint(qdict_get_int(o, "pdn"), ==, p.pdn);
    g_assert_cmpstr(qdict_get_str(o, "access"), ==,
                    "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC");
    g_assert_cmpuint(qdict_get_int(o, "iova"), ==, p.mb.addr);
    g_assert_cmpint(qdict_get_int(o, "length"), ==, QSIM_PAIR_BUF_SIZE);
    g_assert_cmpint(qdict_get_int(o, "level"), ==, 0);
    qobject_unref(obj);

    /* the pair's SEND: 2500 bytes are three packets at MTU 1024 */
    rsge = qsim_sge(&p.mb, 0, 4096);
    qsim_post_recv(p.d, &p.b.qp.rq, 2, &rsge);
    wr.sge[0] = qsim_sge(&p.ma, 0, 2500);
    qsim_send(p.d, &p.a.qp, &wr);
    qsim_cq_expect(p.d, &p.a.scq, 1, RSIM_WC_SUCCESS, RSIM_WC_SEND, 2500, a);
    qsim_cq_expect(p.d, &p.b.rcq, 2, RSIM_WC_SUCCESS, RSIM_WC_RECV, 2500, b);

    obj = qsim_qom_get(p.d, "qps");
    list = qobject_to(QList, obj);
    g_assert_cmpuint(qlist_size(list), ==, 2);
    o = find(list, "qpn", a);
    g_assert_cmpstr(qdict_get_str(o, "type"), ==, "RC");
    g_assert_cmpstr(qdict_get_str(o, "state"), ==, "RTS");
    g_assert_cmpint(qdict_get_int(o, "pdn"), ==, p.pdn);
    g_assert_cmpint(qdict_get_int(o, "send-cqn"), ==, p.a.scqn);
    g_assert_cmpint(qdict_get_int(o, "recv-cqn"), ==, p.a.rcqn);
    g_assert_cmpint(qdict_get_int(o, "dest-qpn"), ==, b);
    g_assert_cmpint(qdict_get_int(o, "sq-psn"), ==, psn);
    g_assert_cmpint(qdict_get_int(o, "path-mtu"), ==, 1024);
    g_assert_cmpint(qdict_get_int(o, "next-psn"), ==, (psn + 3) & 0xffffff);
    g_assert_cmpint(qdict_get_int(o, "oldest-unacked-psn"), ==,
                    (psn + 3) & 0xffffff);
    g_assert_cmpint(qdict_get_int(o, "unacked-psns"), ==, 0);
    g_assert_cmpint(qdict_get_int(o, "wqes-in-flight"), ==, 0);
    g_assert_cmpint(qdict_get_int(member(o, "sq"), "device-index"), ==, 1);
    g_assert_cmpint(qdict_get_int(member(o, "sq"), "depth"), ==, 64);
    o = find(list, "qpn", b);
    g_assert_cmpint(qdict_get_int(o, "expected-psn"), ==,
                    (psn + 3) & 0xffffff);
    g_assert_cmpint(qdict_get_int(o, "msn"), ==, 1);
    g_assert_cmpint(qdict_get_int(member(o, "rq"), "device-index"), ==, 1);
    qobject_unref(obj);

    obj = qsim_qom_get(p.d, "cqs");
    list = qobject_to(QList, obj);
    g_assert_cmpuint(qlist_size(list), ==, 4);
    o = find(list, "cqn", p.b.rcqn);
    g_assert_cmpint(qdict_get_int(o, "eqn"), ==, p.eq.eqn);
    g_assert_cmpint(qdict_get_int(o, "refs"), ==, 1);
    g_assert_cmpint(qdict_get_int(member(o, "ring"), "device-index"), ==, 1);
    g_assert_cmpint(qdict_get_int(member(o, "ring"), "elem-size"), ==, 64);
    g_assert_false(qdict_get_bool(o, "overflowed"));
    qobject_unref(obj);

    /* the counters are QUERY_STATS's, by the names the driver uses */
    obj = qsim_qom_get(p.d, "counters");
    counters = qobject_to(QDict, obj);
    g_assert_cmpint(qdict_size(counters), ==, RSIM_STAT_COUNT);
    g_assert_cmpint(qdict_get_int(counters, "completions"), ==, 2);
    g_assert_cmpint(qdict_get_int(counters, "completions"), ==,
                    qsim_stat(p.d, RSIM_STAT_COMPLETIONS));
    g_assert_cmpint(qdict_get_int(counters, "tx_roce_packets"), ==,
                    qsim_stat(p.d, RSIM_STAT_TX_ROCE_PKTS));
    g_assert_cmpint(qdict_get_int(counters, "tx_roce_packets"), >=, 4);
    g_assert_cmpint(qdict_get_int(counters, "retransmits"), ==, 0);
    qobject_unref(obj);

    obj = qsim_qom_get(p.d, "port");
    port = qobject_to(QDict, obj);
    g_assert_true(qdict_get_bool(port, "driver-ready"));
    g_assert_false(qdict_get_bool(port, "fatal"));
    g_assert_cmpstr(qdict_get_str(port, "mac"), ==, QSIM_MAC);
    g_assert_cmpint(qdict_get_int(port, "host-mem"), >, 0);
    g_assert_cmpint(qdict_get_int(port, "host-mem"), <=,
                    qdict_get_int(port, "host-mem-max"));
    qobject_unref(obj);

    /* the QP moved to ERR shows it */
    qsim_qp_move(p.d, a, RSIM_QPS_ERR);
    obj = qsim_qom_get(p.d, "qps");
    o = find(qobject_to(QList, obj), "qpn", a);
    g_assert_cmpstr(qdict_get_str(o, "state"), ==, "ERR");
    qobject_unref(obj);
    qsim_stop(p.d);
}

static const QSimTest tests[] = {
    { "introspect/objects", test_objects, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
