// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * flush-probe: what a program of a newer rdma-core than Debian 12's (56 or
 * 65) sees when it asks a device for FLUSH (ibv_wr_flush(),
 * IBV_ACCESS_FLUSH_*), the verb that rxe's provider gained in rdma-core 45,
 * and for the other parts of the extended send API and (65) the verbs that
 * libibverbs gained since 56.  Built against that rdma-core's headers (make
 * -C tests/vm/progs flush-probe-65: RC_VERSION is the version), run with its
 * libraries (build/rdma-core-65/bin/rdma-core-65-run); Debian 12's headers
 * do not have the verb.
 *
 *   flush-probe -d DEV -g GID_INDEX
 *
 * On one RC QP connected to itself: the device's FLUSH capability bits,
 * whether an MR with IBV_ACCESS_FLUSH_GLOBAL can be registered, whether a
 * QP with IBV_QP_EX_WITH_FLUSH can be created, an RDMA WRITE through the
 * extended API (the QP works), SENDs whose data is given as a list
 * (ibv_wr_set_inline_data_list() with and without IBV_SEND_INLINE,
 * ibv_wr_set_sge_list(): each buffer of a different length) and what
 * arrived, then a FLUSH, its completion and the
 * QP's state after it.  With RC_VERSION 65 or later, also rdma-core 65's new
 * verbs: ibv_reg_mr_ex(), ibv_alloc_dmah(), ibv_query_port_speed(),
 * ibv_create_comp_cntr().  Prints one "name: value" line per result; the
 * caller judges them.  Exit status 0 when every step could be tried, 1 when
 * one that should always work (opening the device, the QP, the WRITE) failed.
 */
#define _GNU_SOURCE /* strerrorname_np() */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>     /* rdma-core 56's or 65's: 44's has no FLUSH */

#ifndef RC_VERSION
#define RC_VERSION 56
#endif

/* ib_user_verbs.h: IB_UVERBS_DEVICE_FLUSH_GLOBAL and _PERSISTENT */
#define FP_CAP_FLUSH_GLOBAL (1ULL << 38)
#define FP_CAP_FLUSH_PERSISTENT (1ULL << 39)

static void fp_fatal(const char *what, int err)
{
	printf("fatal: %s: %s\n", what, strerror(err));
	exit(1);
}

/* fp_complete: waits (at most 10 s) for one completion on cq. */
static int fp_complete(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 100000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(100);
	}
	return 0;
}

/* fp_connect: the QP to RTS, connected to itself over GID gidx. */
static int fp_connect(struct ibv_qp *qp, int gidx)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	union ibv_gid gid;
	int err;

	err = ibv_query_gid(qp->context, 1, gidx, &gid);
	if (err)
		return err;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x100;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * fp_send_list: a SEND of 8 bytes to the QP itself with FLAGS (and
 * IBV_SEND_SIGNALED), its data given by set_data (as a list of two buffers
 * of 5 and 3 bytes), received at rbuf; prints NAME_status, NAME_len (the
 * receive's byte_len) and NAME_data.
 */
static void fp_send_list(struct ibv_qp *qp, struct ibv_cq *cq,
			 struct ibv_mr *mr, char *rbuf, const char *name,
			 unsigned int flags,
			 void (*set_data)(struct ibv_qp_ex *, struct ibv_mr *))
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct ibv_sge rsge = {
		.addr = (uintptr_t)rbuf, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 10, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc;
	const char *send_status = "none", *recv_status = "none";
	unsigned int len = 0;
	int i, err;

	memset(rbuf, 0, 64);
	err = ibv_post_recv(qp, &rwr, &bad);
	if (err)
		fp_fatal("posting a receive", err);
	ibv_wr_start(qpx);
	qpx->wr_id = 11;
	qpx->wr_flags = IBV_SEND_SIGNALED | flags;
	ibv_wr_send(qpx);
	set_data(qpx, mr);
	err = ibv_wr_complete(qpx);
	if (err) {
		printf("%s_status: post %s\n", name, strerrorname_np(err));
		return;
	}
	for (i = 0; i < 2; i++) {
		if (!fp_complete(cq, &wc))
			break;
		if (wc.wr_id == 10) {
			recv_status = ibv_wc_status_str(wc.status);
			len = wc.byte_len;
		} else {
			send_status = ibv_wc_status_str(wc.status);
		}
	}
	printf("%s_status: send %s, receive %s\n", name, send_status,
	       recv_status);
	printf("%s_len: %u\n", name, len);
	printf("%s_data: %s\n", name,
	       len == 8 && !memcmp(rbuf, "abcdefgh", 8) ? "ok" : "wrong");
}

/* The data of fp_send_list: "abcde" and "fgh", inline or from the MR. */
static void fp_inline_list(struct ibv_qp_ex *qpx, struct ibv_mr *mr)
{
	const struct ibv_data_buf bufs[2] = {
		{ .addr = "abcde", .length = 5 }, { .addr = "fgh", .length = 3 },
	};

	(void)mr;
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
}

static void fp_sge_list(struct ibv_qp_ex *qpx, struct ibv_mr *mr)
{
	char *base = mr->addr;
	const struct ibv_sge sges[2] = {
		{ .addr = (uintptr_t)base + 100, .length = 5, .lkey = mr->lkey },
		{ .addr = (uintptr_t)base + 200, .length = 3, .lkey = mr->lkey },
	};

	memcpy(base + 100, "abcde", 5);
	memcpy(base + 200, "fgh", 3);
	ibv_wr_set_sge_list(qpx, 2, sges);
}

#if RC_VERSION >= 65
/* rdma-core 65's new verbs, on rxe's provider and this device. */
static void fp_new_verbs(struct ibv_context *ctx, struct ibv_pd *pd, char *buf)
{
	struct ibv_mr_init_attr mattr = {
		.length = 4096, .access = IBV_ACCESS_LOCAL_WRITE,
		.comp_mask = IBV_REG_MR_MASK_ADDR, .addr = buf,
	};
	struct ibv_dmah_init_attr dattr = {};
	struct ibv_comp_cntr_init_attr cattr = {};
	struct ibv_comp_cntr *cc;
	struct ibv_dmah *dmah;
	struct ibv_mr *mr;
	uint64_t speed;
	int err;

	mr = ibv_reg_mr_ex(pd, &mattr);
	printf("reg_mr_ex: %s\n", mr ? "ok" : strerrorname_np(errno));
	if (mr)
		ibv_dereg_mr(mr);
	dmah = ibv_alloc_dmah(ctx, &dattr);
	printf("alloc_dmah: %s\n", dmah ? "ok" : strerrorname_np(errno));
	if (dmah)
		ibv_dealloc_dmah(dmah);
	err = ibv_query_port_speed(ctx, 1, &speed);
	printf("query_port_speed: %s\n", err ? strerrorname_np(err) : "ok");
	cc = ibv_create_comp_cntr(ctx, &cattr);
	printf("create_comp_cntr: %s\n", cc ? "ok" : strerrorname_np(errno));
	if (cc)
		ibv_destroy_comp_cntr(cc);
}
#endif

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dev_attr = {};
	struct ibv_qp_init_attr_ex qp_attr = {};
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp_ex *qpx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	const char *dev = NULL;
	static char buf[8192];
	int gidx = -1, opt, i, err;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'g')
			gidx = atoi(optarg);
		else
			break;
	}
	if (!dev || gidx < 0 || optind != argc) {
		fprintf(stderr, "usage: flush-probe -d DEV -g GID_INDEX\n");
		return 2;
	}
	list = ibv_get_device_list(NULL);
	if (!list)
		fp_fatal("ibv_get_device_list", errno);
	for (i = 0; list[i] && !ctx; i++) {
		if (strcmp(ibv_get_device_name(list[i]), dev))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fp_fatal("ibv_open_device", errno);
	}
	if (!ctx)
		fp_fatal(dev, ENODEV);
	err = ibv_query_device_ex(ctx, NULL, &dev_attr);
	if (err)
		fp_fatal("ibv_query_device_ex", err);
	printf("device_cap_flags_ex: 0x%llx\n",
	       (unsigned long long)dev_attr.device_cap_flags_ex);
	printf("cap_flush_global: %s\n",
	       dev_attr.device_cap_flags_ex & FP_CAP_FLUSH_GLOBAL ? "yes" : "no");
	printf("cap_flush_persistent: %s\n",
	       dev_attr.device_cap_flags_ex & FP_CAP_FLUSH_PERSISTENT ?
	       "yes" : "no");

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		fp_fatal("ibv_alloc_pd/ibv_create_cq", errno);

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL);
	printf("reg_mr_flush_global: %s\n", mr ? "ok" : strerrorname_np(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		fp_fatal("ibv_reg_mr", errno);

	qp_attr.qp_type = IBV_QPT_RC;
	qp_attr.send_cq = cq;
	qp_attr.recv_cq = cq;
	qp_attr.cap.max_send_wr = 4;
	qp_attr.cap.max_recv_wr = 4;
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.cap.max_send_sge = 2;
	qp_attr.cap.max_inline_data = 64;
	qp_attr.pd = pd;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qp_attr.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_FLUSH;
	qp = ibv_create_qp_ex(ctx, &qp_attr);
	printf("create_qp_with_flush: %s\n", qp ? "ok" : strerrorname_np(errno));
	if (!qp)
		return 0;
	err = fp_connect(qp, gidx);
	if (err)
		fp_fatal("connecting the QP to itself", err);
	qpx = ibv_qp_to_qp_ex(qp);

	/* First a WRITE of 8 bytes to the second half of the buffer. */
	memcpy(buf, "write-ok", 8);
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, mr->rkey, (uintptr_t)buf + 4096);
	ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
	err = ibv_wr_complete(qpx);
	if (err)
		fp_fatal("posting the WRITE", err);
	if (!fp_complete(cq, &wc))
		fp_fatal("the WRITE's completion", ETIMEDOUT);
	printf("write_status: %s\n", ibv_wc_status_str(wc.status));
	printf("write_data: %s\n", memcmp(buf + 4096, "write-ok", 8) ?
	       "wrong" : "ok");
	if (wc.status != IBV_WC_SUCCESS)
		return 1;

	/*
	 * Inline data: with IBV_SEND_INLINE, as rxe's kernel driver and
	 * rdma-sim read only the WQE's flag (librxe's inline setters do not
	 * set it); last also without (what a device does with it may be an
	 * error that ends the QP).
	 */
	fp_send_list(qp, cq, mr, buf + 6144, "inline_list", IBV_SEND_INLINE,
		     fp_inline_list);
	fp_send_list(qp, cq, mr, buf + 6144, "sge_list", 0, fp_sge_list);
	fp_send_list(qp, cq, mr, buf + 6144, "inline_noflag", 0,
		     fp_inline_list);
#if RC_VERSION >= 65
	fp_new_verbs(ctx, pd, buf);
#endif

	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qpx, mr->rkey, (uintptr_t)buf + 4096, 8,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	err = ibv_wr_complete(qpx);
	printf("flush_post: %s\n", err ? strerrorname_np(err) : "ok");
	if (err)
		return 0;
	if (!fp_complete(cq, &wc)) {
		printf("flush_status: no completion in 10 s\n");
		return 0;
	}
	printf("flush_status: %s\n", ibv_wc_status_str(wc.status));
	printf("flush_wr_id: %llu\n", (unsigned long long)wc.wr_id);
	err = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi);
	if (err)
		fp_fatal("ibv_query_qp", err);
	printf("qp_state_after: %s\n", qa.qp_state == IBV_QPS_ERR ? "ERR" :
	       qa.qp_state == IBV_QPS_RTS ? "RTS" : "other");
	return 0;
}
