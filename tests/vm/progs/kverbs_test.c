// SPDX-License-Identifier: GPL-2.0
/*
 * kverbs_test: exercises the rdma-sim driver's kernel verbs, the way
 * kernel ULPs use them, on every "rsim*" RDMA device when loaded:
 *   PD (DMA MR through get_dma_mr), CQs (direct and softirq polling, kernel
 *   resize), an RC QP to RTS, receives and sends through the kernel rings
 *   (DMA SGEs with the PD's lkey, inline data from kernel memory, RDMA
 *   WRITE, fast registration: alloc_mr + map_mr_sg + REG_MR, LOCAL_INV),
 *   ib_drain_qp (the device flushes everything when the QP enters ERR),
 *   completion events on a softirq CQ, an address handle created and
 *   destroyed in atomic context, and an SRQ whose ring goes round three
 *   times.
 * Without the device's transport the work requests complete only by being
 * flushed, which is what this checks.  The module loads (and stays until
 * rmmod) when every check passed; it logs "kverbs_test: PASS" or the
 * failures, and refuses to load (-EIO) when a check failed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

#include "kverbs_compat.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kernel verbs test for the rdma-sim driver");

static int checks, failures, devices;

#define CHECK(cond, fmt, ...)						\
	do {								\
		checks++;						\
		if (cond) {						\
			pr_info("ok: " fmt "\n", ##__VA_ARGS__);	\
		} else {						\
			failures++;					\
			pr_err("FAIL: " fmt "\n", ##__VA_ARGS__);	\
		}							\
	} while (0)

struct kt_wr {
	struct ib_cqe cqe;
	int status;
	int opcode;
	u32 byte_len;
	bool done;
	struct completion comp;
};

static void kt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_wr *w = container_of(wc->wr_cqe, struct kt_wr, cqe);

	w->status = wc->status;
	w->opcode = wc->opcode;
	w->byte_len = wc->byte_len;
	w->done = true;
	complete(&w->comp);
}

static void kt_init(struct kt_wr *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = kt_done;
	w->status = -1;
	init_completion(&w->comp);
}

static const struct ib_gid_attr *kt_ipv4_gid(struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < dev->port_data[1].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (rdma_gid_attr_network_type(attr) == RDMA_NETWORK_IPV4)
			return attr;
		rdma_put_gid_attr(attr);
	}
	return NULL;
}

static void kt_ah_attr(struct ib_device *dev, const struct ib_gid_attr *g,
		       struct rdma_ah_attr *ah)
{
	union ib_gid dgid = g->gid;

	memset(ah, 0, sizeof(*ah));
	ah->type = rdma_ah_find_type(dev, 1);
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &dgid, 0, g->index, 64, 0);
}

static int kt_to_rts(struct ib_qp *qp, const struct ib_gid_attr *g)
{
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	kt_ah_attr(qp->device, g, &a.ah_attr);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 1;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static struct ib_qp *kt_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(pd, &ia);
}

/* Poll cq until a and b completed (for at most 2 to 4 s) */
static bool kt_wait2(struct ib_cq *cq, struct kt_wr *a, struct kt_wr *b)
{
	int n;

	for (n = 0; n < 400 && !(a->done && b->done); n++) {
		ib_process_cq_direct(cq, -1);
		if (!(a->done && b->done))
			usleep_range(5000, 10000);
	}
	return a->done && b->done;
}

/* A 32-byte SEND of an RC QP to itself, and the receive it lands in */
struct kt_msg {
	struct ib_sge rsge, ssge;
	struct ib_recv_wr rwr;
	struct ib_send_wr swr;
	struct kt_wr r, s;
};

static void kt_msg_init(struct kt_msg *m, struct ib_pd *pd, dma_addr_t dma)
{
	memset(m, 0, sizeof(*m));
	m->rsge.addr = dma + 512;
	m->rsge.length = 64;
	m->rsge.lkey = pd->local_dma_lkey;
	m->ssge.addr = dma + 1024;
	m->ssge.length = 32;
	m->ssge.lkey = pd->local_dma_lkey;
	m->rwr.sg_list = &m->rsge;
	m->rwr.num_sge = 1;
	m->swr.sg_list = &m->ssge;
	m->swr.num_sge = 1;
	m->swr.opcode = IB_WR_SEND;
	m->swr.send_flags = IB_SEND_SIGNALED;
	kt_init(&m->r);
	kt_init(&m->s);
}

/* One message: the receive (on srq if there is one), the SEND, both done */
static int kt_msg_round(struct kt_msg *m, struct ib_qp *qp,
			struct ib_srq *srq, struct ib_cq *cq)
{
	int err;

	kt_init(&m->r);
	kt_init(&m->s);
	m->rwr.wr_cqe = &m->r.cqe;
	m->swr.wr_cqe = &m->s.cqe;
	err = srq ? ib_post_srq_recv(srq, &m->rwr, NULL) :
		    ib_post_recv(qp, &m->rwr, NULL);
	if (!err)
		err = ib_post_send(qp, &m->swr, NULL);
	if (!err && (!kt_wait2(cq, &m->r, &m->s) ||
		     m->r.status != IB_WC_SUCCESS || m->r.byte_len != 32 ||
		     m->r.opcode != IB_WC_RECV || m->s.status != IB_WC_SUCCESS))
		err = -EIO;
	return err;
}

/*
 * A kernel SRQ: an RC QP that sends to itself receives from it, one
 * message at a time, for three laps of the SRQ's ring (its receive
 * records must be free again as their completions come).
 */
static void kt_srq(struct ib_device *dev, struct ib_pd *pd,
		   const struct ib_gid_attr *g, dma_addr_t dma)
{
	struct ib_srq_init_attr sia = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_init_attr ia = {
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_srq *srq;
	struct kt_msg m;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int i, rounds, err;

	kt_msg_init(&m, pd, dma);
	cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "SRQ: ib_alloc_cq");
	if (IS_ERR(cq))
		return;
	srq = ib_create_srq(pd, &sia);
	CHECK(!IS_ERR(srq), "ib_create_srq (4 receives): %u",
	      IS_ERR(srq) ? 0 : sia.attr.max_wr);
	if (IS_ERR(srq))
		goto out_cq;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	qp = ib_create_qp(pd, &ia);
	CHECK(!IS_ERR(qp), "ib_create_qp RC on the SRQ");
	if (IS_ERR(qp))
		goto out_srq;
	err = kt_to_rts(qp, g);
	CHECK(!err, "RC QP %u on the SRQ to RTS (%d)", qp->qp_num, err);
	rounds = 3 * (sia.attr.max_wr + 1);
	for (i = 0; !err && i < rounds; i++)
		err = kt_msg_round(&m, qp, srq, cq);
	CHECK(!err, "%d of %d rounds SEND -> SRQ receive (%d; last: %d/%d/%u, %d/%d)",
	      err ? i - 1 : i, rounds, err, m.r.done, m.r.status, m.r.byte_len,
	      m.s.done, m.s.status);
	ib_drain_qp(qp);
	ib_process_cq_direct(cq, -1);
	ib_destroy_qp(qp);
out_srq:
	ib_destroy_srq(srq);
out_cq:
	ib_free_cq(cq);
}

/*
 * A kernel QP used again after RESET: receives still posted when it goes
 * to RESET are gone with its rings (no completion, ever), and the QP then
 * carries two laps of its rings, every completion a success for the work
 * request it names.
 */
static void kt_reset_reuse(struct ib_device *dev, struct ib_pd *pd,
			   const struct ib_gid_attr *g, dma_addr_t dma)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int i, err, rounds, before = 5, done_left = 0;
	struct kt_wr left[3];
	struct kt_msg m;
	struct ib_cq *cq;
	struct ib_qp *qp;

	kt_msg_init(&m, pd, dma);
	for (i = 0; i < ARRAY_SIZE(left); i++)
		kt_init(&left[i]);
	cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "RESET: ib_alloc_cq");
	if (IS_ERR(cq))
		return;
	qp = kt_qp(pd, cq);
	CHECK(!IS_ERR(qp), "RESET: ib_create_qp RC");
	if (IS_ERR(qp))
		goto out_cq;
	/* 16 receives: the ring has at least 17 slots */
	rounds = before + 2 * 17;
	err = kt_to_rts(qp, g);
	for (i = 0; !err && i < rounds; i++) {
		if (i == before) {
			/* receives left posted, then RESET and back to RTS */
			for (int j = 0; !err && j < ARRAY_SIZE(left); j++) {
				m.rwr.wr_cqe = &left[j].cqe;
				err = ib_post_recv(qp, &m.rwr, NULL);
			}
			if (!err)
				err = ib_modify_qp(qp, &a, IB_QP_STATE);
			if (!err)
				err = kt_to_rts(qp, g);
		}
		if (!err)
			err = kt_msg_round(&m, qp, NULL, cq);
	}
	CHECK(!err, "%d of %d rounds SEND -> receive, RESET after %d (%d; last: %d/%d/%u, %d/%d)",
	      err ? i - 1 : i, rounds, before, err, m.r.done, m.r.status,
	      m.r.byte_len, m.s.done, m.s.status);
	ib_drain_qp(qp);
	ib_process_cq_direct(cq, -1);
	for (i = 0; i < ARRAY_SIZE(left); i++)
		done_left += left[i].done;
	CHECK(!done_left, "receives posted before RESET never complete (%d did)",
	      done_left);
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
}

enum { KT_RECV0, KT_RECV1, KT_SEND_SGE, KT_SEND_INLINE, KT_WRITE, KT_REG,
	KT_INV, KT_NWR };

static void kt_run(struct ib_device *dev)
{
	static const char *const names[KT_NWR] = {
		"recv", "recv", "send (DMA SGE)", "send (inline)", "RDMA WRITE",
		"REG_MR", "LOCAL_INV",
	};
	static const int want_opcode[KT_NWR] = {
		IB_WC_RECV, IB_WC_RECV, IB_WC_SEND, IB_WC_SEND,
		IB_WC_RDMA_WRITE, IB_WC_REG_MR, IB_WC_LOCAL_INV,
	};
	const struct ib_gid_attr *g;
	struct kt_wr w[KT_NWR], ev;
	struct rdma_ah_attr aa;
	struct ib_qp_attr qa;
	struct ib_qp_init_attr qia;
	struct scatterlist sg[2];
	struct ib_cq *cq = NULL, *scq = NULL;
	struct ib_qp *qp = NULL, *qp2 = NULL;
	struct ib_mr *mr = NULL;
	struct ib_pd *pd;
	struct ib_ah *ah;
	unsigned long flags;
	DEFINE_SPINLOCK(lock);
	char inline_msg[32] = "inline from the kernel";
	void *buf = NULL;
	dma_addr_t dma = 0;
	int i, n, err;

	g = kt_ipv4_gid(dev);
	if (!g) {
		CHECK(0, "%s: an IPv4 RoCE v2 GID (the netdev needs an address)",
		      dev_name(&dev->dev));
		return;
	}
	/* The global rkey makes the PD's DMA MR a remote-writable target. */
	pd = ib_alloc_pd(dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	CHECK(!IS_ERR(pd), "ib_alloc_pd");
	if (IS_ERR(pd))
		goto out_gid;
	CHECK(pd->local_dma_lkey != 0 && pd->unsafe_global_rkey != 0,
	      "the PD's DMA MR (get_dma_mr): local_dma_lkey 0x%x, global rkey 0x%x",
	      pd->local_dma_lkey, pd->unsafe_global_rkey);

	/* Address handle in atomic context (as ib_cm does) */
	kt_ah_attr(dev, g, &aa);
	spin_lock_irqsave(&lock, flags);
	ah = rdma_create_ah(pd, &aa, 0);
	if (!IS_ERR(ah))
		rdma_destroy_ah(ah, 0);
	spin_unlock_irqrestore(&lock, flags);
	CHECK(!IS_ERR(ah), "create and destroy an AH with interrupts off");

	cq = ib_alloc_cq(dev, NULL, 32, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "ib_alloc_cq (direct polling)");
	if (IS_ERR(cq)) {
		cq = NULL;
		goto out;
	}
	qp = kt_qp(pd, cq);
	CHECK(!IS_ERR(qp), "ib_create_qp RC");
	if (IS_ERR(qp)) {
		qp = NULL;
		goto out;
	}
	err = kt_to_rts(qp, g);
	CHECK(!err, "RC QP %u to RTS (loopback AV) (%d)", qp->qp_num, err);
	err = ib_query_qp(qp, &qa, IB_QP_STATE, &qia);
	CHECK(!err && qa.qp_state == IB_QPS_RTS &&
	      qia.cap.max_inline_data >= 64, "ib_query_qp: RTS, inline %u",
	      qia.cap.max_inline_data);

	buf = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	dma = ib_dma_map_single(dev, buf, 2 * PAGE_SIZE, DMA_BIDIRECTIONAL);
	CHECK(buf && !ib_dma_mapping_error(dev, dma), "DMA-mapped buffer");
	if (!buf || ib_dma_mapping_error(dev, dma))
		goto out;

	for (i = 0; i < KT_NWR; i++)
		kt_init(&w[i]);
	for (i = 0; i < 128; i++)
		((u8 *)buf)[1024 + i] = i ^ 0xa5;
	/* Receives */
	for (i = KT_RECV0; i <= KT_RECV1; i++) {
		struct ib_sge sge = { .addr = dma + i * 256, .length = 256,
				      .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_cqe = &w[i].cqe, .sg_list = &sge,
					  .num_sge = 1 };

		err = ib_post_recv(qp, &rwr, NULL);
		CHECK(!err, "ib_post_recv %d (%d)", i, err);
	}
	/* Sends: DMA SGE, inline kernel data, RDMA WRITE */
	{
		struct ib_sge sge = { .addr = dma + 1024, .length = 128,
				      .lkey = pd->local_dma_lkey };
		struct ib_sge isge = { .addr = (uintptr_t)inline_msg,
				       .length = sizeof(inline_msg) };
		struct ib_send_wr s1 = { .wr_cqe = &w[KT_SEND_SGE].cqe,
					 .sg_list = &sge, .num_sge = 1,
					 .opcode = IB_WR_SEND,
					 .send_flags = IB_SEND_SIGNALED };
		struct ib_send_wr s2 = { .wr_cqe = &w[KT_SEND_INLINE].cqe,
					 .sg_list = &isge, .num_sge = 1,
					 .opcode = IB_WR_SEND,
					 .send_flags = IB_SEND_SIGNALED |
						       IB_SEND_INLINE };
		struct ib_rdma_wr s3 = {
			.wr = { .wr_cqe = &w[KT_WRITE].cqe, .sg_list = &sge,
				.num_sge = 1, .opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = dma + 4096,
			.rkey = pd->unsafe_global_rkey,
		};

		s1.next = &s2;
		s2.next = &s3.wr;
		err = ib_post_send(qp, &s1, NULL);
		CHECK(!err, "ib_post_send SEND (SGE), SEND (inline), RDMA WRITE (%d)",
		      err);
	}
	/* Fast registration */
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	CHECK(!IS_ERR(mr), "ib_alloc_mr (fast registration, 4 pages)");
	if (IS_ERR(mr)) {
		mr = NULL;
	} else {
		struct ib_reg_wr reg = {};
		struct ib_send_wr inv = {};

		sg_init_table(sg, 2);
		sg_dma_address(&sg[0]) = dma;
		sg_dma_len(&sg[0]) = PAGE_SIZE;
		sg_dma_address(&sg[1]) = dma + PAGE_SIZE;
		sg_dma_len(&sg[1]) = PAGE_SIZE;
		n = ib_map_mr_sg(mr, sg, 2, NULL, PAGE_SIZE);
		CHECK(n == 2, "ib_map_mr_sg maps 2 pages (%d)", n);
		ib_update_fast_reg_key(mr, 0x42);
		reg.wr.wr_cqe = &w[KT_REG].cqe;
		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		inv.wr_cqe = &w[KT_INV].cqe;
		inv.opcode = IB_WR_LOCAL_INV;
		inv.send_flags = IB_SEND_SIGNALED;
		inv.ex.invalidate_rkey = mr->rkey;
		reg.wr.next = &inv;
		err = ib_post_send(qp, &reg.wr, NULL);
		CHECK(!err, "ib_post_send REG_MR + LOCAL_INV (%d)", err);
	}

	/*
	 * With the device's transport the QP talks to itself and the work
	 * completes; without, it waits until ib_drain_qp moves the QP to ERR
	 * and the device flushes it.  Either outcome is checked.
	 */
	for (n = 0; n < 200; n++) {
		ib_process_cq_direct(cq, -1);
		for (i = 0; i < KT_NWR && w[i].done; i++)
			;
		if (i == KT_NWR)
			break;
		usleep_range(10000, 20000);
	}
	ib_drain_qp(qp);
	ib_process_cq_direct(cq, -1);
	CHECK(1, "ib_drain_qp returned (flush completions of its markers)");
	for (i = 0; i < KT_NWR; i++)
		CHECK(w[i].done && (w[i].status == IB_WC_SUCCESS ||
				    w[i].status == IB_WC_WR_FLUSH_ERR) &&
		      w[i].opcode == want_opcode[i],
		      "%s completed: done %d status %d (%s) opcode %d (want %d)",
		      names[i], w[i].done, w[i].status,
		      w[i].status == IB_WC_SUCCESS ? "success" :
		      w[i].status == IB_WC_WR_FLUSH_ERR ? "flushed" : "error",
		      w[i].opcode, want_opcode[i]);
	if (w[KT_RECV0].status == IB_WC_SUCCESS)
		CHECK(w[KT_RECV0].byte_len == 128 &&
		      !memcmp(buf, buf + 1024, 128),
		      "SEND (DMA SGE) data arrived: %u bytes",
		      w[KT_RECV0].byte_len);
	if (w[KT_RECV1].status == IB_WC_SUCCESS)
		CHECK(w[KT_RECV1].byte_len == sizeof(inline_msg) &&
		      !memcmp(buf + 256, inline_msg, sizeof(inline_msg)),
		      "inline SEND data arrived: %u bytes \"%.24s\"",
		      w[KT_RECV1].byte_len, (char *)buf + 256);
	if (w[KT_WRITE].status == IB_WC_SUCCESS)
		CHECK(!memcmp(buf + 4096, buf + 1024, 128),
		      "RDMA WRITE through the global rkey arrived");

	/* Resize the kernel CQ, then use it again */
	err = kt_resize_cq(cq, 100);
	if (err == -EOPNOTSUPP) {
		pr_info("skip: ib_resize_cq: Linux 7.2 resizes user CQs only\n");
		goto events;
	}
	CHECK(!err && cq->cqe >= 100, "ib_resize_cq to 100: %d entries (%d)",
	      cq->cqe, err);
	ib_destroy_qp(qp);
	qp = kt_qp(pd, cq);
	CHECK(!IS_ERR(qp), "a new QP on the resized CQ");
	if (IS_ERR(qp)) {
		qp = NULL;
	} else {
		struct ib_sge sge = { .addr = dma, .length = 64,
				      .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_cqe = &w[0].cqe, .sg_list = &sge,
					  .num_sge = 1 };

		kt_init(&w[0]);
		err = kt_to_rts(qp, g);
		if (!err)
			err = ib_post_recv(qp, &rwr, NULL);
		CHECK(!err, "post a receive on it (%d)", err);
		ib_drain_qp(qp);
		ib_process_cq_direct(cq, -1);
		CHECK(w[0].done && w[0].status == IB_WC_WR_FLUSH_ERR,
		      "its receive is flushed into the resized CQ");
	}

events:
	/* Completion events: a CQ polled from softirq */
	scq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_SOFTIRQ);
	CHECK(!IS_ERR(scq), "ib_alloc_cq (softirq polling)");
	if (IS_ERR(scq)) {
		scq = NULL;
		goto out;
	}
	qp2 = kt_qp(pd, scq);
	if (IS_ERR(qp2)) {
		CHECK(0, "QP on the softirq CQ");
		qp2 = NULL;
		goto out;
	}
	kt_init(&ev);
	{
		struct ib_sge sge = { .addr = dma, .length = 64,
				      .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_cqe = &ev.cqe, .sg_list = &sge,
					  .num_sge = 1 };
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		err = kt_to_rts(qp2, g);
		if (!err)
			err = ib_post_recv(qp2, &rwr, NULL);
		if (!err)
			err = ib_modify_qp(qp2, &a, IB_QP_STATE);
		CHECK(!err, "QP on the softirq CQ: receive posted, QP to ERR (%d)",
		      err);
		CHECK(wait_for_completion_timeout(&ev.comp, 5 * HZ) &&
		      ev.status == IB_WC_WR_FLUSH_ERR,
		      "completion event -> softirq poll -> done callback (status %d)",
		      ev.status);
	}

	kt_srq(dev, pd, g, dma);
	kt_reset_reuse(dev, pd, g, dma);

out:
	if (qp2)
		ib_destroy_qp(qp2);
	if (qp)
		ib_destroy_qp(qp);
	if (mr)
		ib_dereg_mr(mr);
	if (scq)
		ib_free_cq(scq);
	if (cq)
		ib_free_cq(cq);
	if (buf && dma && !ib_dma_mapping_error(dev, dma))
		ib_dma_unmap_single(dev, dma, 2 * PAGE_SIZE, DMA_BIDIRECTIONAL);
	kfree(buf);
	ib_dealloc_pd(pd);
out_gid:
	rdma_put_gid_attr(g);
}

static int kt_add(struct ib_device *dev)
{
	if (strncmp(dev_name(&dev->dev), "rsim", 4))
		return -EOPNOTSUPP;
	devices++;
	pr_info("testing %s\n", dev_name(&dev->dev));
	kt_run(dev);
	return -EOPNOTSUPP;	/* nothing to keep */
}

static void kt_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client kt_client = {
	.name = KBUILD_MODNAME,
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init_module(void)
{
	int err = ib_register_client(&kt_client);

	if (err)
		return err;
	ib_unregister_client(&kt_client);
	if (!devices) {
		pr_err("FAIL: no rsim RDMA device\n");
		return -ENODEV;
	}
	pr_info("%d checks, %d failed\n", checks, failures);
	if (failures)
		return -EIO;
	pr_info("PASS\n");
	return 0;
}

static void __exit kt_exit_module(void)
{
}

module_init(kt_init_module);
module_exit(kt_exit_module);
