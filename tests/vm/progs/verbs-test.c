// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-test: control-path test of the rdma-sim driver through the
 * stock rdma-core stack (libibverbs + the rxe provider), run in a guest.
 *
 *   verbs-test [-d DEV] [-D DEBUGFS_MRS] check
 *       creates and destroys PD, CQ, QP (RESET->INIT->RTR->RTS), SRQ, AH
 *       and MRs of several sizes (PBL levels 0, 1, 2), checks the errno of
 *       bad requests, checks the driver's debugfs "mrs" file (level, ok).
 *       Exit status 0 when every check passed.
 *   verbs-test [-d DEV] hold
 *       creates one of each object, prints READY and waits to be killed
 *       (the driver-unload test kills it, then unloads the driver).
 *
 * Every check prints "ok: ..." or "FAIL: ..." with the details.
 */
#include "verbs-test.h"

/* The Q_Key of the UD test, where a QP sends to itself */
#define UD_QKEY 0x11111111

static int failures;
static int checks;

void ok(const char *fmt, ...)
{
	va_list ap;

	checks++;
	printf("ok: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	checks++;
	failures++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void die(const char *fmt, ...)
{
	va_list ap;

	printf("FATAL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(2);
}

/* expect(call_result_errno, want, what): 0 means success */
void expect_errno(int got, int want, const char *what)
{
	if (got == want)
		ok("%s -> %s", what, want ? strerror(want) : "success");
	else
		fail("%s: expected %s, got %s (%d)", what,
		     want ? strerror(want) : "success",
		     got ? strerror(got) : "success", got);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *c = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		die("no RDMA devices (is rdma_sim loaded and bound?)");
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		c = ibv_open_device(list[i]);
		if (!c)
			die("ibv_open_device(%s): %s",
			    ibv_get_device_name(list[i]), strerror(errno));
		break;
	}
	if (!c)
		die("device %s not found", name ? name : "(any)");
	ibv_free_device_list(list);
	return c;
}

/* Prefer an IPv4-mapped RoCE v2 GID (::ffff:a.b.c.d), else index 0. */
static void pick_gid(struct ctx *c)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff };
	union ibv_gid g;
	int i;

	c->gid_index = -1;
	for (i = 0; i < c->port.gid_tbl_len; i++) {
		if (ibv_query_gid(c->ctx, 1, i, &g))
			continue;
		if (!memcmp(g.raw, v4pfx, sizeof(v4pfx))) {
			c->gid = g;
			c->gid_index = i;
			return;
		}
		if (c->gid_index < 0 && (g.global.subnet_prefix ||
					 g.global.interface_id)) {
			c->gid = g;
			c->gid_index = i;
		}
	}
	if (c->gid_index < 0)
		die("port 1 has no GID (no IP address on the netdev?)");
}

/* An address vector to the port's own GID (the device loops back to it) */
static struct ibv_ah_attr own_av(struct ctx *c)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = c->gid,
			.sgid_index = c->gid_index,
			.hop_limit = 64,
		},
	};

	return aa;
}

static struct ibv_qp *make_qp(struct ctx *c, enum ibv_qp_type type,
			      uint32_t wr, uint32_t sge, uint32_t inl,
			      struct ibv_srq *srq, struct ibv_qp_init_attr *out)
{
	struct ibv_qp_init_attr a = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.srq = srq,
		.cap = {
			.max_send_wr = wr,
			.max_recv_wr = srq ? 0 : wr,
			.max_send_sge = sge,
			.max_recv_sge = srq ? 0 : sge,
			.max_inline_data = inl,
		},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &a);

	if (out)
		*out = a;
	return qp;
}

static int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct ctx *c, struct ibv_qp *qp, uint32_t dest_qpn,
		  int mask_drop)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0x1234,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = own_av(c),
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

	return ibv_modify_qp(qp, &a, mask & ~mask_drop);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0x4321,
		.max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int qp_state(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_CUR_STATE |
			 IBV_QP_DEST_QPN | IBV_QP_PATH_MTU | IBV_QP_SQ_PSN |
			 IBV_QP_RQ_PSN | IBV_QP_AV | IBV_QP_CAP, &ia))
		return -1;
	return a->qp_state;
}

/*
 * Post one inline SEND of len bytes at buf; with an AH (UD), to this same
 * QP through it.
 */
static int post_inline_send(struct ibv_qp *qp, void *buf, uint32_t len,
			    uint64_t wr_id, unsigned int flags,
			    struct ibv_ah *ah)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | flags,
	}, *bad;

	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qp->qp_num;
		wr.wr.ud.remote_qkey = UD_QKEY;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* ------------------------------------------------------------------------
 * The checks
 * ------------------------------------------------------------------------ */

static void test_caps_errors(struct ctx *c)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	errno = 0;
	qp = make_qp(c, IBV_QPT_RC, 4, c->attr.max_sge + 1, 0, NULL, &ia);
	if (qp) {
		fail("create_qp with %d SGEs (max %d) succeeded",
		     c->attr.max_sge + 1, c->attr.max_sge);
		ibv_destroy_qp(qp);
	} else {
		expect_errno(errno, EINVAL, "create_qp with too many send SGEs");
	}
	errno = 0;
	qp = make_qp(c, IBV_QPT_RC, c->attr.max_qp_wr + 1, 1, 0, NULL, &ia);
	if (qp) {
		fail("create_qp with %d WRs (max %d) succeeded",
		     c->attr.max_qp_wr + 1, c->attr.max_qp_wr);
		ibv_destroy_qp(qp);
	} else {
		expect_errno(errno, EINVAL, "create_qp with too deep a queue");
	}
	errno = 0;
	qp = make_qp(c, IBV_QPT_RC, 4, 1, 100000, NULL, &ia);
	if (qp) {
		fail("create_qp with 100000 inline bytes succeeded");
		ibv_destroy_qp(qp);
	} else {
		expect_errno(errno, EINVAL, "create_qp with too much inline data");
	}
	errno = 0;
	cq = ibv_create_cq(c->ctx, c->attr.max_cqe + 1, NULL, NULL, 0);
	if (cq) {
		fail("create_cq with %d entries (max %d) succeeded",
		     c->attr.max_cqe + 1, c->attr.max_cqe);
		ibv_destroy_cq(cq);
	} else {
		expect_errno(errno, EINVAL, "create_cq with too many entries");
	}
}

static void test_rc_qp(struct ctx *c)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp, *qp2;
	int st, err;

	qp = make_qp(c, IBV_QPT_RC, 16, 2, 64, NULL, &ia);
	if (!qp) {
		fail("create RC QP: %s", strerror(errno));
		return;
	}
	if (ia.cap.max_send_wr >= 16 && ia.cap.max_recv_wr >= 16 &&
	    ia.cap.max_send_sge >= 2 && ia.cap.max_inline_data >= 64)
		ok("create RC QP %u: caps send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u",
		   qp->qp_num, ia.cap.max_send_wr, ia.cap.max_recv_wr,
		   ia.cap.max_send_sge, ia.cap.max_recv_sge,
		   ia.cap.max_inline_data);
	else
		fail("create RC QP: reported caps below the request (send_wr %u recv_wr %u sge %u inline %u)",
		     ia.cap.max_send_wr, ia.cap.max_recv_wr,
		     ia.cap.max_send_sge, ia.cap.max_inline_data);
	st = qp_state(qp, &a);
	if (st == IBV_QPS_RESET)
		ok("new QP is in RESET");
	else
		fail("new QP state %d, want RESET", st);

	/* Illegal: RESET -> RTR */
	expect_errno(to_rtr(c, qp, qp->qp_num, 0), EINVAL,
		     "modify_qp RESET->RTR (illegal transition)");
	/* Bad QP access flags (only local write and remote rights allowed) */
	expect_errno(to_init(qp, IBV_ACCESS_MW_BIND), EINVAL,
		     "modify_qp RESET->INIT with MW_BIND access");
	expect_errno(to_init(qp, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE),
		     0, "modify_qp RESET->INIT");
	/* INIT -> RTR without its required AV */
	expect_errno(to_rtr(c, qp, qp->qp_num, IBV_QP_AV), EINVAL,
		     "modify_qp INIT->RTR without the AV");
	expect_errno(to_rtr(c, qp, qp->qp_num, 0), 0, "modify_qp INIT->RTR");
	expect_errno(to_rts(qp), 0, "modify_qp RTR->RTS");
	st = qp_state(qp, &a);
	if (st == IBV_QPS_RTS && a.dest_qp_num == qp->qp_num &&
	    a.path_mtu == IBV_MTU_1024 && a.sq_psn == 0x4321 &&
	    a.rq_psn == 0x1234 && a.ah_attr.grh.sgid_index == c->gid_index &&
	    !memcmp(&a.ah_attr.grh.dgid, &c->gid, sizeof(c->gid)))
		ok("query_qp: RTS, dest_qpn %u, mtu 1024, PSNs and AV as set",
		   a.dest_qp_num);
	else
		fail("query_qp: state %d dest_qpn %u mtu %d sq_psn 0x%x rq_psn 0x%x sgid_index %d",
		     st, a.dest_qp_num, a.path_mtu, a.sq_psn, a.rq_psn,
		     a.ah_attr.grh.sgid_index);
	/* Illegal: RTS -> INIT */
	{
		struct ibv_qp_attr b = { .qp_state = IBV_QPS_INIT };

		expect_errno(ibv_modify_qp(qp, &b, IBV_QP_STATE), EINVAL,
			     "modify_qp RTS->INIT (illegal transition)");
	}
	/* Post work: lands in the rings, the SQ doorbell is a write(2). */
	{
		char msg[32] = "hello rdma-sim";
		struct ibv_recv_wr rwr = { .wr_id = 2 }, *rbad;

		expect_errno(ibv_post_recv(qp, &rwr, &rbad), 0,
			     "post_recv (no SGE) on the RC QP");
		expect_errno(post_inline_send(qp, msg, sizeof(msg), 1,
					      IBV_SEND_SIGNALED, NULL), 0,
			     "post_send inline SEND (SQ doorbell)");
	}
	/* RTS -> ERR -> RESET -> INIT again */
	{
		struct ibv_qp_attr b = { .qp_state = IBV_QPS_ERR };

		expect_errno(ibv_modify_qp(qp, &b, IBV_QP_STATE), 0,
			     "modify_qp RTS->ERR");
		b.qp_state = IBV_QPS_RESET;
		expect_errno(ibv_modify_qp(qp, &b, IBV_QP_STATE), 0,
			     "modify_qp ERR->RESET");
		expect_errno(to_init(qp, IBV_ACCESS_LOCAL_WRITE), 0,
			     "modify_qp RESET->INIT after reset");
	}
	err = ibv_destroy_qp(qp);
	expect_errno(err, 0, "destroy RC QP");

	/* A second QP gets another number */
	qp = make_qp(c, IBV_QPT_RC, 1, 1, 0, NULL, NULL);
	qp2 = make_qp(c, IBV_QPT_RC, 1, 1, 0, NULL, NULL);
	if (qp && qp2 && qp->qp_num != qp2->qp_num && qp->qp_num > 1)
		ok("two RC QPs: numbers %u and %u", qp->qp_num, qp2->qp_num);
	else
		fail("two RC QPs: %s", (qp && qp2) ? "same number" :
		     strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	if (qp2)
		ibv_destroy_qp(qp2);
}

static void test_ud_ah(struct ctx *c)
{
	struct ibv_ah_attr aa = own_av(c);
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = UD_QKEY,
	};
	struct ibv_qp *qp;
	struct ibv_ah *ah;

	ah = ibv_create_ah(c->pd, &aa);
	if (ah)
		ok("create AH to GID index %d", c->gid_index);
	else
		fail("create AH: %s", strerror(errno));

	qp = make_qp(c, IBV_QPT_UD, 8, 1, 0, NULL, NULL);
	if (!qp) {
		fail("create UD QP: %s", strerror(errno));
	} else {
		expect_errno(ibv_modify_qp(qp, &a, IBV_QP_STATE |
					   IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					   IBV_QP_QKEY), 0,
			     "UD QP RESET->INIT");
		a.qp_state = IBV_QPS_RTR;
		expect_errno(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0,
			     "UD QP INIT->RTR");
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 7;
		expect_errno(ibv_modify_qp(qp, &a, IBV_QP_STATE |
					   IBV_QP_SQ_PSN), 0,
			     "UD QP RTR->RTS");
		if (ah) {
			char buf[16] = "ud";

			expect_errno(post_inline_send(qp, buf, sizeof(buf), 3,
						      0, ah), 0,
				     "UD post_send with the AH");
		}
		expect_errno(ibv_destroy_qp(qp), 0, "destroy UD QP");
	}
	if (ah)
		expect_errno(ibv_destroy_ah(ah), 0, "destroy AH");
}

static void test_srq(struct ctx *c)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 32, .max_sge = 2, .srq_limit = 0 },
	};
	struct ibv_srq_attr q;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = ibv_create_srq(c->pd, &sa);
	if (!srq) {
		fail("create SRQ: %s", strerror(errno));
		return;
	}
	ok("create SRQ: max_wr %u max_sge %u", sa.attr.max_wr,
	   sa.attr.max_sge);
	q.srq_limit = 4;
	expect_errno(ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT), 0,
		     "modify_srq limit 4");
	q.max_wr = 100;
	expect_errno(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR), 0,
		     "modify_srq max_wr 100 (resize)");
	memset(&q, 0, sizeof(q));
	if (ibv_query_srq(srq, &q))
		fail("query_srq: %s", strerror(errno));
	else if (q.max_wr >= 100 && q.srq_limit == 4)
		ok("query_srq: max_wr %u limit %u", q.max_wr, q.srq_limit);
	else
		fail("query_srq: max_wr %u limit %u, want >= 100 and 4",
		     q.max_wr, q.srq_limit);
	{
		char buf[64];
		struct ibv_sge sge = { .addr = (uintptr_t)buf,
				       .length = sizeof(buf) };
		struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		expect_errno(ibv_post_srq_recv(srq, &wr, &bad), 0,
			     "post_srq_recv");
	}
	qp = make_qp(c, IBV_QPT_RC, 4, 1, 0, srq, NULL);
	if (!qp) {
		fail("create RC QP on the SRQ: %s", strerror(errno));
	} else {
		ok("create RC QP %u on the SRQ", qp->qp_num);
		/* The SRQ is in use */
		errno = 0;
		expect_errno(ibv_destroy_qp(qp), 0, "destroy QP on the SRQ");
	}
	expect_errno(ibv_destroy_srq(srq), 0, "destroy SRQ");
}

static void test_cq(struct ctx *c)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;

	cq = ibv_create_cq(c->ctx, 10, NULL, c->ch, 0);
	if (!cq) {
		fail("create CQ: %s", strerror(errno));
		return;
	}
	ok("create CQ: %d entries", cq->cqe);
	expect_errno(ibv_req_notify_cq(cq, 0), 0, "req_notify_cq NEXT");
	expect_errno(ibv_req_notify_cq(cq, 1), 0, "req_notify_cq SOLICITED");
	if (ibv_poll_cq(cq, 1, &wc) == 0)
		ok("poll of an empty CQ returns 0");
	else
		fail("poll of an empty CQ did not return 0");
	expect_errno(ibv_resize_cq(cq, 100), 0, "resize_cq to 100");
	if (cq->cqe >= 100)
		ok("resized CQ has %d entries", cq->cqe);
	else
		fail("resized CQ has %d entries, want >= 100", cq->cqe);
	if (ibv_poll_cq(cq, 1, &wc) == 0)
		ok("poll of the resized CQ returns 0");
	else
		fail("poll of the resized CQ did not return 0");
	expect_errno(ibv_destroy_cq(cq), 0, "destroy CQ");
}

/* ------------------------------------------------------------------------
 * Completions and events (the device flushes WQEs when a QP enters ERR)
 * ------------------------------------------------------------------------ */

/* Wait up to ms for async event type on the context; others are printed. */
static bool wait_async(struct ctx *c, enum ibv_event_type type, int ms)
{
	struct pollfd pfd = { .fd = c->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool found = false;

	while (!found && poll(&pfd, 1, ms) > 0) {
		if (ibv_get_async_event(c->ctx, &ev))
			break;
		printf("async event: %s\n", ibv_event_type_str(ev.event_type));
		found = ev.event_type == type;
		ibv_ack_async_event(&ev);
	}
	return found;
}

/* Wait up to ms for a completion event of cq through its channel. */
static bool wait_cq_event(struct ctx *c, struct ibv_cq *cq, int ms)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, ms) <= 0)
		return false;
	if (ibv_get_cq_event(c->ch, &ev_cq, &ev_ctx))
		return false;
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq == cq;
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void test_events(struct ctx *c)
{
	struct ibv_wc wc[4];
	struct ibv_qp *qp;
	struct ibv_cq *cq, *small;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 32 },
		.qp_type = IBV_QPT_RC,
	};
	char buf[64] = "flush me";
	struct ibv_recv_wr rwr = { .wr_id = 0x7ec5 }, *rbad;
	int n, i;

	/*
	 * 1. Flush completions in a user CQ and its completion event.  The QP
	 * stays in INIT (no traffic: the outcome does not depend on the
	 * transport) with a receive posted, then enters ERR.
	 */
	cq = ibv_create_cq(c->ctx, 8, NULL, c->ch, 0);
	if (!cq) {
		fail("create CQ for the event test: %s", strerror(errno));
		return;
	}
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(c->pd, &ia);
	if (!qp || to_init(qp, IBV_ACCESS_LOCAL_WRITE)) {
		fail("QP to INIT for the event test: %s", strerror(errno));
		goto out_cq;
	}
	expect_errno(ibv_post_recv(qp, &rwr, &rbad), 0, "post_recv (to flush)");
	expect_errno(ibv_req_notify_cq(cq, 0), 0, "arm the CQ");
	expect_errno(to_state(qp, IBV_QPS_ERR), 0, "modify_qp INIT->ERR");
	if (wait_cq_event(c, cq, 5000))
		ok("completion event through the channel (EQ interrupt -> comp_handler)");
	else
		fail("no completion event within 5 s after the QP entered ERR");
	n = ibv_poll_cq(cq, 4, wc);
	for (i = 0; i < n; i++)
		printf("wc: wr_id 0x%" PRIx64 " status %s opcode %d qp %u\n",
		       wc[i].wr_id, ibv_wc_status_str(wc[i].status),
		       wc[i].opcode, wc[i].qp_num);
	if (n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	    wc[0].qp_num == qp->qp_num && wc[0].wr_id == 0x7ec5 &&
	    wc[0].opcode == IBV_WC_RECV)
		ok("flushed RECV completion: WR_FLUSH_ERR, wr_id, opcode, QP number right");
	else
		fail("poll_cq after the flush: %d completions, want 1 flushed RECV", n);
	if (ibv_poll_cq(cq, 4, wc) == 0)
		ok("CQ empty after polling");
	else
		fail("CQ not empty after polling");
	/* Posting on a QP in ERR completes at once with WR_FLUSH_ERR */
	expect_errno(post_inline_send(qp, buf, 16, 0x5e0d, IBV_SEND_SIGNALED,
				      NULL), 0, "post_send in ERR");
	for (i = 0, n = 0; i < 500 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (!n)
			usleep(10000);
	}
	if (n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	    wc[0].wr_id == 0x5e0d && wc[0].opcode == IBV_WC_SEND)
		ok("a send posted in ERR is flushed (SEND, wr_id right)");
	else
		fail("a send posted in ERR: %d completions (status %d)", n,
		     n ? (int)wc[0].status : -1);

	/*
	 * 1b. Resizing a CQ that holds completions: shrinking below them fails
	 * with EINVAL, growing keeps them (the device moves them over).
	 */
	{
		struct ibv_qp *fq;
		struct ibv_cq *rcq = ibv_create_cq(c->ctx, 10, NULL, c->ch, 0);
		struct ibv_qp_init_attr fa = ia;
		int got = 0, good = 0;

		if (!rcq) {
			fail("create CQ for the resize test: %s", strerror(errno));
			goto resize_done;
		}
		fa.send_cq = fa.recv_cq = rcq;
		fa.cap.max_recv_wr = 8;
		fq = ibv_create_qp(c->pd, &fa);
		if (!fq || to_init(fq, IBV_ACCESS_LOCAL_WRITE)) {
			fail("QP for the resize test: %s", strerror(errno));
			goto resize_cq;
		}
		for (i = 0; i < 6; i++) {
			rwr.wr_id = 0x100 + i;
			ibv_post_recv(fq, &rwr, &rbad);
		}
		rwr.wr_id = 0x7ec5;
		expect_errno(ibv_req_notify_cq(rcq, 0), 0, "arm the resize-test CQ");
		expect_errno(to_state(fq, IBV_QPS_ERR), 0,
			     "flush 6 receives into it");
		if (!wait_cq_event(c, rcq, 5000))
			fail("no completion event for the 6 flushed receives");
		/* the device writes all 6 before the event; give it a moment */
		usleep(200000);
		errno = 0;
		expect_errno(ibv_resize_cq(rcq, 2), EINVAL,
			     "resize_cq to 2 with 6 completions pending");
		expect_errno(ibv_resize_cq(rcq, 40), 0,
			     "resize_cq to 40 with 6 completions pending");
		while ((n = ibv_poll_cq(rcq, 4, wc)) > 0) {
			for (i = 0; i < n; i++, got++)
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR &&
				    wc[i].wr_id == 0x100u + got)
					good++;
		}
		if (got == 6 && good == 6 && rcq->cqe >= 40)
			ok("the 6 completions survived the resize, in order (CQ now %d entries)",
			   rcq->cqe);
		else
			fail("after the resize: %d completions, %d as expected, %d entries",
			     got, good, rcq->cqe);
		ibv_destroy_qp(fq);
resize_cq:
		ibv_destroy_cq(rcq);
resize_done:
		;
	}

	/* 2. SQ_DRAINED: RTS -> SQD with the notification requested */
	expect_errno(to_state(qp, IBV_QPS_RESET), 0, "modify_qp ERR->RESET");
	if (to_init(qp, IBV_ACCESS_LOCAL_WRITE) ||
	    to_rtr(c, qp, qp->qp_num, 0) || to_rts(qp)) {
		fail("QP back to RTS: %s", strerror(errno));
	} else {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD,
					 .en_sqd_async_notify = 1 };

		expect_errno(ibv_modify_qp(qp, &a, IBV_QP_STATE |
					   IBV_QP_EN_SQD_ASYNC_NOTIFY), 0,
			     "modify_qp RTS->SQD with async notify");
		if (wait_async(c, IBV_EVENT_SQ_DRAINED, 5000))
			ok("async event SQ_DRAINED (AEQ -> QP event handler)");
		else
			fail("no SQ_DRAINED event within 5 s");
		expect_errno(to_state(qp, IBV_QPS_RTS), 0, "modify_qp SQD->RTS");
	}
	ibv_destroy_qp(qp);

	/* 3. QP_LAST_WQE_REACHED: a QP on an SRQ enters ERR */
	srq = ibv_create_srq(c->pd, &sa);
	if (srq) {
		ia.srq = srq;
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
		qp = ibv_create_qp(c->pd, &ia);
		if (qp && !to_init(qp, IBV_ACCESS_LOCAL_WRITE) &&
		    !to_state(qp, IBV_QPS_ERR)) {
			if (wait_async(c, IBV_EVENT_QP_LAST_WQE_REACHED, 5000))
				ok("async event QP_LAST_WQE_REACHED");
			else
				fail("no QP_LAST_WQE_REACHED within 5 s");
		} else {
			fail("SRQ QP to ERR: %s", strerror(errno));
		}
		if (qp)
			ibv_destroy_qp(qp);
		ibv_destroy_srq(srq);
		ia.srq = NULL;
		ia.cap.max_recv_wr = 4;
		ia.cap.max_recv_sge = 1;
	} else {
		fail("create SRQ for the event test: %s", strerror(errno));
	}

	/* 4. CQ_ERR: a one-entry CQ overflows with three flushed WQEs */
	small = ibv_create_cq(c->ctx, 1, NULL, NULL, 0);
	if (!small) {
		fail("create a one-entry CQ: %s", strerror(errno));
		goto out_cq;
	}
	ia.send_cq = ia.recv_cq = small;
	qp = ibv_create_qp(c->pd, &ia);
	if (qp && !to_init(qp, IBV_ACCESS_LOCAL_WRITE)) {
		for (i = 0; i < 3; i++)
			ibv_post_recv(qp, &rwr, &rbad);
		expect_errno(to_state(qp, IBV_QPS_ERR), 0,
			     "modify_qp INIT->ERR with 3 receives, CQ of 1");
		if (wait_async(c, IBV_EVENT_CQ_ERR, 5000))
			ok("async event CQ_ERR on CQ overflow");
		else
			fail("no CQ_ERR within 5 s");
	} else {
		fail("QP on the one-entry CQ: %s", strerror(errno));
	}
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(small);
out_cq:
	ibv_destroy_cq(cq);
}

static void setup(struct ctx *c, const char *dev)
{
	c->ctx = open_dev(dev);
	if (ibv_query_device(c->ctx, &c->attr))
		die("ibv_query_device: %s", strerror(errno));
	if (ibv_query_port(c->ctx, 1, &c->port))
		die("ibv_query_port: %s", strerror(errno));
	printf("device %s: max_qp %d max_qp_wr %d max_sge %d max_cq %d max_cqe %d max_mr %d max_pd %d max_srq %d max_ah %d; port state %d active_mtu %d gid_tbl_len %d\n",
	       ibv_get_device_name(c->ctx->device), c->attr.max_qp,
	       c->attr.max_qp_wr, c->attr.max_sge, c->attr.max_cq,
	       c->attr.max_cqe, c->attr.max_mr, c->attr.max_pd,
	       c->attr.max_srq, c->attr.max_ah, c->port.state,
	       c->port.active_mtu, c->port.gid_tbl_len);
	pick_gid(c);
	printf("using GID index %d\n", c->gid_index);
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	c->ch = ibv_create_comp_channel(c->ctx);
	if (!c->ch)
		die("ibv_create_comp_channel: %s", strerror(errno));
	c->cq = ibv_create_cq(c->ctx, 64, NULL, c->ch, 0);
	if (!c->cq)
		die("ibv_create_cq: %s", strerror(errno));
}

static int run_check(struct ctx *c)
{
	ok("open device, alloc PD, create CQ with a completion channel");
	test_caps_errors(c);
	test_cq(c);
	test_rc_qp(c);
	test_ud_ah(c);
	test_srq(c);
	test_events(c);
	test_mrs(c);
	expect_errno(ibv_destroy_cq(c->cq), 0, "destroy the main CQ");
	expect_errno(ibv_destroy_comp_channel(c->ch), 0,
		     "destroy the completion channel");
	expect_errno(ibv_dealloc_pd(c->pd), 0, "dealloc PD");
	expect_errno(ibv_close_device(c->ctx), 0, "close device");
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

/* Objects that stay until the process is killed */
static int run_hold(struct ctx *c)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_ah_attr aa = own_av(c);
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *buf = malloc(1 << 20);

	memset(buf, 0, 1 << 20);
	qp = make_qp(c, IBV_QPT_RC, 16, 1, 0, NULL, NULL);
	if (!qp || to_init(qp, IBV_ACCESS_LOCAL_WRITE) ||
	    to_rtr(c, qp, qp->qp_num, 0) || to_rts(qp))
		die("hold: QP to RTS: %s", strerror(errno));
	mr = ibv_reg_mr(c->pd, buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("hold: reg_mr: %s", strerror(errno));
	if (!ibv_create_srq(c->pd, &sa))
		die("hold: create_srq: %s", strerror(errno));
	if (!ibv_create_ah(c->pd, &aa))
		die("hold: create_ah: %s", strerror(errno));
	if (ibv_req_notify_cq(c->cq, 0))
		die("hold: req_notify_cq: %s", strerror(errno));
	printf("READY qpn %u lkey 0x%x\n", qp->qp_num, mr->lkey);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c = {};
	const char *dev = NULL;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "d:D:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'D':
			c.mrs_path = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	setup(&c, dev);
	if (!strcmp(argv[optind], "check"))
		return run_check(&c);
	if (!strcmp(argv[optind], "hold"))
		return run_hold(&c);
usage:
	fprintf(stderr, "usage: %s [-d DEV] [-D DEBUGFS_MRS_FILE] check|hold\n",
		argv[0]);
	return 2;
}
