/*
 * rdma-sim fuzz targets: the wire target.  Each input starts from a world
 * of QPs in every state, with requests in flight and receives posted, and
 * delivers frames to them (and may do whatever else the driver target
 * does).  The device is 10.0.0.1 (GID 0) and fe80::1 (GID 1); its QPs are
 * connected to peers at 10.0.0.2 and fe80::2, which are the device itself
 * behind a mirror: with RSIM_FUZZ_RECORD=DIR, the frames the device sends
 * in the world, and its answers to them, come back with source and
 * destination swapped and are saved in DIR as seeds (real traffic) of at
 * most RSIM_FUZZ_MAX_LEN bytes; with RSIM_FUZZ_PCAP=FILE as well, so are
 * the frames of a capture, sent to the world's QPs instead.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "net/util.h"
#include "tests/qtest/libqtest.h"
#include "rdma-sim-fuzz.h"

/* The peer's MAC: the QPs send to it */
static const uint8_t peer_mac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

#define GSI_QKEY        0x80010000u
#define UD_QKEY         0x11111111u
#define BUF_SIZE        (64 * 1024)

/*
 * The QPs.  A and B are RC pairs (B6 over IPv6); the state QPs are set
 * up as B is, then stopped at or moved to their state, so that A's
 * requests fit them too.
 */
enum {
    RC_A, RC_B, RC6_A, RC6_B, UC_A, UC_B, UD_A, UD_B, GSI,
    RC_RESET, RC_INIT, RC_RTR, RC_SQD, RC_ERR,
    NQP
};

static const char *const state_names[] = {
    [RC_RESET] = "reset", [RC_INIT] = "init", [RC_RTR] = "rtr",
    [RC_SQD] = "sqd", [RC_ERR] = "err",
};

typedef struct World {
    QSimDev *d;
    uint32_t pdn;
    QSimEq eq;
    QSimMr mr;
    QSimEndpoint qp[NQP];
    uint32_t ahn, ahn6;
} World;

static World w;

/* The PSNs each RC or UC QP sends with (wrapping soon) and expects */
static uint32_t sq_psn(int i)
{
    return (0xfffff8 + i) & 0xffffff;
}

static void qp_connect(int i, int peer, uint8_t type, bool ipv6, uint8_t state)
{
    QSimPath path = {
        .type = type,
        .access = QSIM_ACC_ALL,
        .av.sgid_index = ipv6,
        .av.hop_limit = 64,
        .av.network_type = ipv6 ? RSIM_NET_IPV6 : RSIM_NET_IPV4,
        .path_mtu = RSIM_MTU_1024,
        .dest_qpn = w.qp[peer].qp.qpn,
        .rq_psn = sq_psn(peer),
        .sq_psn = sq_psn(i),
        .timeout = 14,
        .retry_cnt = 7,
        .rd_atomic = 4,
        .min_rnr_timer = 1,
        .state = state,
    };

    if (ipv6) {
        qsim_gid_v6(path.av.dgid, 2);
    } else {
        qsim_gid_v4(path.av.dgid, 10, 0, 0, 2);
    }
    memcpy(path.av.dmac, peer_mac, 6);
    qsim_qp_connect(w.d, w.qp[i].qp.qpn, &path);
}

/* Receive into [off, off + len) of the buffer */
static void post_recv(int i, uint64_t wr_id, uint64_t off, uint32_t len)
{
    struct rsim_sge sge = qsim_sge(&w.mr, off, len);

    qsim_post_recv(w.d, &w.qp[i].qp.rq, wr_id, &sge);
}

/* Post a request of len bytes at off of the buffer, to remote offset roff */
static void post_req(int i, uint32_t opcode, uint64_t off, uint32_t len,
                 uint64_t roff)
{
    QSimWr wr = {
        .wr_id = 0x100 * i + opcode,
        .opcode = opcode,
        .ex = cpu_to_be32(0x12345678),
        .remote_addr = w.mr.addr + roff,
        .rkey = w.mr.rkey,
        .compare_add = 5,
        .swap = 0x1111,
        .nsge = 1,
    };

    wr.sge[0] = qsim_sge(&w.mr, off, len);
    if (i == UD_A || i == GSI) {
        wr.ah_num = w.ahn;
        wr.remote_qpn = w.qp[i == GSI ? GSI : UD_B].qp.qpn;
        wr.remote_qkey = i == GSI ? GSI_QKEY : UD_QKEY;
    }
    qsim_send(w.d, &w.qp[i].qp, &wr);
}

static void world_objects(void)
{
    QSimDev *d = w.d;
    struct rsim_cmd_create_ah ah;
    uint8_t gid[16];

    qsim_bringup(d);
    qsim_msix_setup(d);
    qsim_gid_add_v4(d, 0, 1);
    qsim_gid_v6(gid, 1);
    qsim_gid_add(d, 1, gid);
    w.pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &w.eq, 1, 256);
    qsim_eq_doorbell(d, &w.eq, true);
    w.mr = qsim_mr_alloc(d, w.pdn, BUF_SIZE, QSIM_ACC_ALL);
    qsim_fill_pattern(d, w.mr.addr, BUF_SIZE, 1);
    qsim_ah_cmd(&ah, w.pdn);
    w.ahn = qsim_create(d, &ah, NULL);

    for (int i = 0; i < NQP; i++) {
        uint8_t type = i == UC_A || i == UC_B ? RSIM_QPT_UC :
                       i == UD_A || i == UD_B ? RSIM_QPT_UD :
                       i == GSI ? RSIM_QPT_GSI : RSIM_QPT_RC;

        qsim_endpoint_create(d, &w.qp[i], type, w.pdn, w.eq.eqn);
    }
    qp_connect(RC_A, RC_B, RSIM_QPT_RC, false, 0);
    qp_connect(RC_B, RC_A, RSIM_QPT_RC, false, 0);
    qp_connect(RC6_A, RC6_B, RSIM_QPT_RC, true, 0);
    qp_connect(RC6_B, RC6_A, RSIM_QPT_RC, true, 0);
    qp_connect(UC_A, UC_B, RSIM_QPT_UC, false, 0);
    qp_connect(UC_B, UC_A, RSIM_QPT_UC, false, 0);
    qsim_qp_ud_ready(d, w.qp[UD_A].qp.qpn, UD_QKEY);
    qsim_qp_ud_ready(d, w.qp[UD_B].qp.qpn, UD_QKEY);
    qsim_qp_ud_ready(d, w.qp[GSI].qp.qpn, GSI_QKEY);
    qp_connect(RC_INIT, RC_A, RSIM_QPT_RC, false, RSIM_QPS_INIT);
    qp_connect(RC_RTR, RC_A, RSIM_QPT_RC, false, RSIM_QPS_RTR);
    qp_connect(RC_SQD, RC_A, RSIM_QPT_RC, false, 0);
    qsim_qp_move(d, w.qp[RC_SQD].qp.qpn, RSIM_QPS_SQD);
    qp_connect(RC_ERR, RC_A, RSIM_QPT_RC, false, 0);
    qsim_qp_move(d, w.qp[RC_ERR].qp.qpn, RSIM_QPS_ERR);
}

/* Receives for what the others send, and requests in flight */
static void world_traffic(void)
{
    for (int i = 0; i < NQP; i++) {
        if (i != RC_A && i != RC6_A && i != UC_A && i != UD_A) {
            for (int k = 0; k < 4; k++) {
                post_recv(i, 0x1000 * i + k, 4096 * k, 4096);
            }
        }
    }
    post_recv(RC_A, 0xa000, 0, 4096);
    post_req(RC_A, RSIM_WR_SEND, 0, 100, 0);
    post_req(RC_A, RSIM_WR_SEND_WITH_IMM, 0, 2500, 0);
    post_req(RC_A, RSIM_WR_RDMA_WRITE, 0, 3000, 8192);
    post_req(RC_A, RSIM_WR_RDMA_WRITE_WITH_IMM, 0, 16, 16384);
    post_req(RC_A, RSIM_WR_RDMA_READ, 20480, 2500, 0);
    post_req(RC_A, RSIM_WR_ATOMIC_CMP_AND_SWP, 32768, 8, 40960);
    post_req(RC_A, RSIM_WR_ATOMIC_FETCH_AND_ADD, 32776, 8, 40968);
    post_req(RC_B, RSIM_WR_SEND, 0, 64, 0);
    post_req(RC_B, RSIM_WR_RDMA_READ, 49152, 100, 0);
    post_req(RC6_A, RSIM_WR_SEND, 0, 200, 0);
    post_req(RC6_A, RSIM_WR_RDMA_READ, 53248, 1200, 0);
    post_req(UC_A, RSIM_WR_SEND, 0, 1500, 0);
    post_req(UC_A, RSIM_WR_RDMA_WRITE_WITH_IMM, 0, 100, 12288);
    post_req(UD_A, RSIM_WR_SEND_WITH_IMM, 0, 256, 0);
    post_req(GSI, RSIM_WR_SEND, 0, 256, 0);
    flush_events(w.d->qts);
}

/* ---- Recording: the device's frames come back through a mirror ---- */

static GQueue sent = G_QUEUE_INIT;

static void record_rx(const uint8_t *frame, size_t len)
{
    g_queue_push_tail(&sent, g_byte_array_append(g_byte_array_new(), frame,
                                                 len));
}

/* BTH offset of a RoCEv2 frame the device sent (IPv4 or IPv6) */
static size_t bth_off(const uint8_t *f)
{
    return lduw_be_p(f + 12) == 0x86dd ? 14 + 40 + 8 : 14 + 20 + 8;
}

/*
 * The FRAME operation that brings frame f back to the device: MACs and
 * IP addresses swapped, without the ICRC (the operation computes it).
 */
static GByteArray *mirror(const GByteArray *f)
{
    GByteArray *op = g_byte_array_new();
    size_t ip = lduw_be_p(f->data + 12) == 0x86dd ? 14 + 8 : 14 + 12;
    size_t alen = ip == 14 + 8 ? 16 : 4;
    uint8_t keep = 0;

    g_byte_array_append(op, &keep, 1);
    g_byte_array_append(op, f->data + 6, 6);
    g_byte_array_append(op, f->data, 6);
    g_byte_array_append(op, f->data + 12, ip - 12);
    g_byte_array_append(op, f->data + ip + alen, alen);
    g_byte_array_append(op, f->data + ip, alen);
    g_byte_array_append(op, f->data + ip + 2 * alen,
                        f->len - 4 - ip - 2 * alen);
    return op;
}

/* The FRAME operation op, sent to QP qpn instead */
static GByteArray *retarget(const GByteArray *op, uint32_t qpn)
{
    GByteArray *r = g_byte_array_append(g_byte_array_new(), op->data,
                                        op->len);
    uint8_t *bth = r->data + 1 + bth_off(r->data + 1);

    bth[5] = qpn >> 16;
    bth[6] = qpn >> 8;
    bth[7] = qpn;
    return r;
}

/* Seeds have at most this many bytes (RSIM_FUZZ_MAX_LEN) */
static size_t max_len;

/* Append the FRAME operation op to in, if it still fits */
static void add_frame(GByteArray *in, const GByteArray *op)
{
    if (in->len + strlen(QSIM_FUZZ_SEPARATOR) + 1 + op->len <= max_len) {
        qsim_fuzz_op(in, QSIM_FUZZ_FRAME, op->data, op->len);
    }
}

static void add_op(GHashTable *inputs, uint32_t key, const GByteArray *op)
{
    GByteArray *in = g_hash_table_lookup(inputs, GUINT_TO_POINTER(key));

    if (!in) {
        in = g_byte_array_new();
        g_hash_table_insert(inputs, GUINT_TO_POINTER(key), in);
    }
    add_frame(in, op);
}

/*
 * Deliver what the device sent, mirrored, until it has nothing more to
 * say; save the exchange as seeds: all of it, the frames to each QP, and
 * A's frames to B sent to each state QP instead.
 */
static void record(const char *dir)
{
    GHashTable *inputs = g_hash_table_new_full(NULL, NULL, NULL,
                                               (GDestroyNotify)
                                               g_byte_array_unref);
    g_autoptr(GByteArray) all = g_byte_array_new();
    uint32_t qpn_b = w.qp[RC_B].qp.qpn;
    GByteArray *f;
    GHashTableIter it;
    gpointer key, val;

    g_mkdir_with_parents(dir, 0755);
    for (int idle = 0; idle < 100; idle++) {
        g_autoptr(GByteArray) op = NULL;
        uint32_t qpn;

        f = g_queue_pop_head(&sent);
        if (!f) {
            flush_events(w.d->qts);
            continue;
        }
        idle = 0;
        op = mirror(f);
        qpn = ldl_be_p(op->data + 1 + bth_off(op->data + 1) + 4) & 0xffffff;
        g_assert(!memmem(op->data, op->len, QSIM_FUZZ_SEPARATOR,
                         strlen(QSIM_FUZZ_SEPARATOR)));

        add_frame(all, op);
        add_op(inputs, qpn, op);
        for (int i = RC_RESET; qpn == qpn_b && i < NQP; i++) {
            g_autoptr(GByteArray) r = retarget(op, w.qp[i].qp.qpn);

            add_op(inputs, 0x1000000 + i, r);
        }
        g_byte_array_unref(f);
        /* the record is what the fuzz target does with it */
        {
            g_autoptr(GByteArray) one = g_byte_array_new();

            qsim_fuzz_op(one, QSIM_FUZZ_FRAME, op->data, op->len);
            qsim_fuzz_run(w.d->qts, one->data, one->len);
        }
    }
    qsim_fuzz_save(dir, "record-all", all);
    g_hash_table_iter_init(&it, inputs);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        uint32_t k = GPOINTER_TO_UINT(key);
        g_autofree char *name =
            k >> 24 ? g_strdup_printf("record-%s", state_names[k & 0xff])
                    : g_strdup_printf("record-qp%u", k);

        qsim_fuzz_save(dir, name, val);
    }
    g_hash_table_unref(inputs);
}

/* ---- Traffic captured elsewhere (a VM run), made the world's ---- */

#define CAPTURE_SEEDS   24

/*
 * The RoCEv2 frame f (IPv4, without its ICRC) from a capture, sent to the
 * world: the peer's addresses; RC requests to B, RC responses to A, UC to
 * UC B, datagrams to UD B or the GSI QP with their Q_Keys; each flow's
 * PSNs moved to start where the world expects them (flows: first PSNs);
 * remote addresses and keys into the buffer.  False if f is none of that.
 */
static bool capture_retarget(uint8_t *f, size_t len, GHashTable *flows)
{
    static const uint8_t dev_ip[4] = { 10, 0, 0, 1 }, peer_ip[4] = {
        10, 0, 0, 2,
    };
    uint8_t *bth = f + 42, *ext = bth + 12, op;
    uint32_t qpn, psn, base, key;
    gpointer first;

    if (len < 54 || lduw_be_p(f + 12) != 0x0800 || (f[14] & 0xf) != 5 ||
        f[23] != 17 || lduw_be_p(f + 36) != 4791) {
        return false;
    }
    net_parse_macaddr(f, QSIM_MAC);
    memcpy(f + 6, peer_mac, 6);
    memcpy(f + 26, peer_ip, 4);
    memcpy(f + 30, dev_ip, 4);
    op = bth[0];
    switch (op & 0xe0) {
    case 0x00:
        qpn = w.qp[op >= 0x0d && op <= 0x12 ? RC_A : RC_B].qp.qpn;
        base = sq_psn(RC_A);
        break;
    case 0x20:
        qpn = w.qp[UC_B].qp.qpn;
        base = sq_psn(UC_A);
        break;
    case 0x60:
        if (len < 62) {
            return false;
        }
        qpn = w.qp[(ldl_be_p(bth + 4) & 0xffffff) == 1 ? GSI : UD_B].qp.qpn;
        stl_be_p(ext, qpn == 1 ? GSI_QKEY : UD_QKEY);
        base = 0;
        break;
    default:
        return false;
    }
    key = (ldl_be_p(bth + 4) & 0xffffff) | (op & 0xe0) << 24 |
          (op >= 0x0d && op <= 0x12) << 24;
    psn = ldl_be_p(bth + 8) & 0xffffff;
    if (!g_hash_table_lookup_extended(flows, GUINT_TO_POINTER(key), NULL,
                                      &first)) {
        first = GUINT_TO_POINTER(psn);
        g_hash_table_insert(flows, GUINT_TO_POINTER(key), first);
    }
    stl_be_p(bth + 4, (bth[4] << 24) | qpn);
    stl_be_p(bth + 8, (bth[8] << 24) |
             ((psn - GPOINTER_TO_UINT(first) + base) & 0xffffff));
    /* RETH (WRITE first/only, READ request) or AtomicETH: VA and R_Key */
    if ((((op & 0x1f) == 0x06 || (op & 0x1f) == 0x0a ||
          (op & 0x1f) == 0x0b || op == 0x0c) && len >= 70) ||
        ((op == 0x13 || op == 0x14) && len >= 82)) {
        stq_be_p(ext, w.mr.addr + ldq_be_p(ext) % (BUF_SIZE / 2));
        stl_be_p(ext + 8, w.mr.rkey);
    }
    return true;
}

/*
 * Seeds from a capture (pcap, as QEMU's filter-dump writes it): a seed
 * starts at the first frame of each opcode and of the GSI QP, and takes
 * the RoCEv2 frames from there that fit in max bytes.
 */
static void capture_seeds(const char *pcap, const char *dir)
{
    g_autofree uint8_t *data = NULL;
    g_autoptr(GError) err = NULL;
    g_autoptr(GPtrArray) frames = g_ptr_array_new();
    bool seen[256] = { false }, gsi_seen = false;
    size_t len, off = 24;
    int seeds = 0;

    if (!g_file_get_contents(pcap, (char **)&data, &len, &err)) {
        g_error("%s", err->message);
    }
    g_assert(len >= 24 && ldl_le_p(data) == 0xa1b2c3d4);
    while (off + 16 <= len && off + 16 + ldl_le_p(data + off + 8) <= len) {
        g_ptr_array_add(frames, data + off);
        off += 16 + ldl_le_p(data + off + 8);
    }
    for (guint i = 0; i < frames->len && seeds < CAPTURE_SEEDS; i++) {
        const uint8_t *rec = frames->pdata[i], *f = rec + 16;
        bool gsi = ldl_le_p(rec + 8) >= 54 && f[42] == 0x64 &&
                   (ldl_be_p(f + 46) & 0xffffff) == 1;
        g_autoptr(GByteArray) in = NULL;
        g_autoptr(GHashTable) flows = NULL;
        g_autofree char *name = NULL;

        if (ldl_le_p(rec + 8) < 54 || lduw_be_p(f + 36) != 4791 ||
            (seen[f[42]] && (!gsi || gsi_seen))) {
            continue;
        }
        seen[f[42]] = true;
        gsi_seen |= gsi;
        in = g_byte_array_new();
        flows = g_hash_table_new(NULL, NULL);
        for (guint k = i; k < frames->len; k++) {
            const uint8_t *r = frames->pdata[k];
            uint32_t flen = ldl_le_p(r + 8);
            g_autofree uint8_t *op = g_malloc(flen + 1);

            if (in->len + strlen(QSIM_FUZZ_SEPARATOR) + flen > max_len) {
                break;
            }
            /* the capture's frames end with their ICRC */
            op[0] = 0;
            memcpy(op + 1, r + 16, flen);
            if (flen > 58 && capture_retarget(op + 1, flen - 4, flows)) {
                qsim_fuzz_op(in, QSIM_FUZZ_FRAME, op, flen - 3);
            }
        }
        name = g_strdup_printf("vm-%02x%s", f[42], gsi ? "-gsi" : "");
        qsim_fuzz_save(dir, name, in);
        seeds++;
    }
}

static void world_build(void)
{
    memset(&w, 0, sizeof(w));
    w.d = qsim_fuzz_dev;
    world_objects();
    world_traffic();
}

void qsim_fuzz_wire_pre_fuzz(QTestState *qts)
{
    const char *dir = getenv("RSIM_FUZZ_RECORD");

    qsim_fuzz_init(qts, dir ? record_rx : NULL);
    qsim_fuzz_track_ram();
    world_build();
    /* with the BAR that MSI-X mapped */
    qsim_fuzz_save_config();
    if (dir) {
        g_assert(getenv("RSIM_FUZZ_MAX_LEN"));
        max_len = atoi(getenv("RSIM_FUZZ_MAX_LEN"));
        record(dir);
        if (getenv("RSIM_FUZZ_PCAP") && *getenv("RSIM_FUZZ_PCAP")) {
            capture_seeds(getenv("RSIM_FUZZ_PCAP"), dir);
        }
        /* not exit(): libFuzzer would take that for a crash */
        _exit(0);
    }
}

/*
 * Each input from the world as pre_fuzz built it: after the input, the
 * device's reset and guest RAM zero end the world, and it is built again
 * (a few admin commands; forking a child for each input from a world
 * built once was 20 times slower)
 */
void qsim_fuzz_wire_fuzz(QTestState *qts, const uint8_t *data, size_t size)
{
    qsim_fuzz_run(qts, data, size);
    qsim_fuzz_reset(qts);
    qsim_forget(w.d);
    world_build();
}
