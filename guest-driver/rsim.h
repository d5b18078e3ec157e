/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: private definitions shared by the driver's files.
 *
 *   rsim_main.c     PCI probe/remove, reset, MSI-X, event queues, async events
 *   rsim_admin.c    admin queue mechanics (submission, completion, timeouts)
 *   rsim_cmd.c      one function per admin command
 *   rsim_queue.c    page lists and Soft-RoCE format rings
 *   rsim_kwq.c      kernel work requests and their completions
 *   rsim_verbs.c    ib_device_ops: device, port, PD, CQ, QP, SRQ, AH
 *   rsim_mr.c       memory registration
 *   rsim_netdev.c   the port's Ethernet net_device
 *   rsim_debugfs.c  debugfs diagnostics
 *   rsim_restrack.c the driver's attributes in `rdma resource show -d`
 *
 * The hardware itself is described by <rdma-sim/rdma_sim_hw.h> and
 * docs/datasheet.md.
 */
#ifndef _RSIM_H_
#define _RSIM_H_

#include <linux/bitfield.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/refcount.h>
#include <linux/semaphore.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <rdma-sim/rdma_sim_hw.h>

#include "rsim_cmd.h"

#define DRV_MODULE_NAME		"rdma_sim"
#define RSIM_IBDEV_NAME		"rsim%d"

/* Sizes the driver chooses (all within the device's CAP_* limits) */
#define RSIM_AQ_DEPTH		64
#define RSIM_AEQ_DEPTH_MAX	4096
#define RSIM_EQ_DEPTH		1024
#define RSIM_ETH_TX_DEPTH	256
#define RSIM_ETH_RX_DEPTH	128
#define RSIM_ETH_RX_BUF		RSIM_ETH_MIN_RX_BUF

/* A page list fits one 4 KiB list (level 1) up to this many pages. */
#define RSIM_PBL_L1_MAX		RSIM_PBL_LEAF_ENTRIES

struct rsim_dev;

/* Bits of rsim_dev.flags */
enum {
	RSIM_FLAG_DEAD,		/* fatal, reset or gone: no more commands */
	RSIM_FLAG_ADMIN_IRQ,	/* admin completions arrive by interrupt */
	RSIM_FLAG_IB_REGISTERED,
};

/* Limits read from the CAP_* registers */
struct rsim_caps {
	u32 features;
	u32 dma_width;
	u32 max_qp;
	u32 max_cq;
	u32 max_srq;
	u32 max_mr;
	u32 max_pd;
	u32 max_ah;
	u32 max_gid;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_srq_sge;
	u32 max_qp_wr;
	u32 max_cqe;
	u32 max_srq_wr;
	u32 max_inline;
	u64 max_mr_size;
	u32 page_sizes;
	u32 max_path_mtu;
	u32 max_rd_atom;
	u32 max_init_rd_atom;
	u32 max_eq;
	u32 max_eqe;
	u32 max_pbl_l1;
	u32 max_pbl_root;
	u32 max_fast_reg_pages;
	u32 max_aq_depth;
	u32 max_eth_depth;
	u32 max_pkeys;
	u32 db_pages;
	u32 msix_vectors;
	u32 admin_timeout_ms;
	u32 reset_timeout_ms;
};

/* Coherent DMA memory the driver shares with the device */
struct rsim_dma_buf {
	void *va;
	dma_addr_t dma;
	size_t size;
};

/* ---- Admin queue (rsim_admin.c) ---------------------------------------- */
struct rsim_admin_slot {
	struct completion done;
	struct rsim_admin_cqe cqe;
	u16 id;			/* command id of the command in this slot */
	bool busy;		/* owned by a submitter */
	bool completed;
	bool damaged;		/* its completion disagreed with it */
};

struct rsim_admin {
	struct rsim_dma_buf sq;
	struct rsim_dma_buf cq;
	u32 depth;
	u32 sq_tail;
	u32 cq_head;
	bool cq_phase;
	u8 gen;			/* changes the command ids of reused slots */
	spinlock_t lock;	/* sq_tail, cq_head, cq_phase, gen, slots, at */
	struct semaphore avail;	/* free slots; depth - 1 may be outstanding */
	struct rsim_admin_slot *slots;
	struct rsim_admin_slot **at;	/* the command in each AQ entry */
};

/* ---- Event queues (rsim_main.c) ---------------------------------------- */
struct rsim_aeq {
	struct rsim_dma_buf buf;
	u32 depth;
	u32 head;
	bool phase;
	spinlock_t lock;	/* head, phase: interrupt vs. probe */
};

struct rsim_eq {
	struct rsim_dev *dev;
	struct rsim_dma_buf buf;
	u32 depth;
	u32 head;
	bool phase;
	u32 eqn;
	u16 vector;		/* MSI-X vector */
	bool created;
	bool irq_requested;
	char irq_name[32];
};

/* ---- Page lists and rings (rsim_queue.c) ------------------------------- */
struct rsim_pbl_page {
	__le64 *va;
	dma_addr_t dma;
	size_t size;
};

/*
 * A page list as the device reads it.  Level 0 names a contiguous buffer
 * (addr), level 1 one list of page addresses, level 2 a root of leaf lists.
 */
struct rsim_pbl {
	u8 level;		/* enum rsim_pbl_level */
	u8 page_shift;
	u32 npages;
	u64 addr;		/* what the device is given: buffer, list, root */
	struct rsim_pbl_page top;	/* level 1 list or level 2 root */
	struct rsim_pbl_page *leaves;	/* level 2 */
	u32 nleaves;
};

/* User mapping of a ring: the entry owns the memory (freed in mmap_free). */
struct rsim_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
	size_t size;
};

/*
 * A Soft-RoCE format ring (struct rsim_queue_header + elements) in
 * vmalloc memory, each page DMA-mapped and described by a page list.
 */
struct rsim_ring {
	void *buf;
	struct rsim_queue_header *hdr;	/* == buf */
	size_t size;			/* allocated, page multiple */
	u32 npages;
	dma_addr_t *dma;		/* per page */
	struct rsim_pbl pbl;
	u32 depth;
	u32 mask;
	u8 log2_elem;
	struct rsim_mmap_entry *mentry;	/* user rings */
};

/* ---- Kernel work queues (rsim_kwq.c) ----------------------------------- */
enum rsim_kwq_kind {
	RSIM_KWQ_SQ,
	RSIM_KWQ_RQ,
	RSIM_KWQ_SRQ,
};

/* A kernel work request as posted */
struct rsim_kwr {
	u64 wr_id;		/* the kernel user's: the device never sees it */
	u32 seq;		/* of its cookie; 0: retired */
	u32 len;		/* bytes its SGEs or inline data hold */
	u8 opcode;		/* send: RSIM_WC_* of its completion */
	bool signaled;		/* a receive always is */
};

/*
 * The work requests of a kernel SQ, RQ or SRQ: one per ring slot (an SRQ's
 * receive takes any free one)
 */
struct rsim_kwq {
	struct rsim_kwr *wrs;
	u32 mask;
	u32 done;		/* oldest slot not retired; SRQ: next to try */
	u32 flushed;		/* next slot a software flush completes */
	u32 seq;		/* of the newest cookie */
	u32 owner;		/* QPN or SRQN */
	u8 kind;		/* enum rsim_kwq_kind */
};

/* ---- Verbs objects (rsim_verbs.c, rsim_mr.c) --------------------------- */
struct rsim_ucontext {
	struct ib_ucontext ibucontext;
};

struct rsim_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct rsim_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 vector;		/* completion vector: its EQ */
	bool user;
	struct rsim_ring ring;
	spinlock_t lock;	/* kernel CQ: consumer index, software flush */
	u32 cons;		/* kernel CQ: next entry to poll */
	bool resizing;
	struct mutex resize_lock;	/* one resize at a time */
	refcount_t refcnt;	/* lookups by event handlers */
	struct completion free;
};

struct rsim_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	bool user;
	struct rsim_ring ring;
	struct rsim_kwq kwq;	/* kernel SRQ */
	spinlock_t lock;	/* kernel SRQ: producer, kwq */
	u32 prod;
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	refcount_t refcnt;
	struct completion free;
};

struct rsim_qp {
	struct ib_qp ibqp;
	u32 qpn;
	bool user;
	u8 state;		/* enum ib_qp_state, as last known */
	bool sig_all;
	bool has_rq;
	struct rsim_ring sq;
	struct rsim_ring rq;
	struct rsim_kwq skwq;	/* kernel QP: its SQ's and RQ's work requests */
	struct rsim_kwq rkwq;
	spinlock_t sq_lock;	/* kernel QP: SQ producer */
	spinlock_t rq_lock;	/* kernel QP: RQ producer */
	u32 sq_prod;
	u32 rq_prod;
	u32 max_send_wr;
	u32 max_recv_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	struct list_head kqp_link;	/* rsim_dev.kernel_qps */
	refcount_t refcnt;
	struct completion free;
};

struct rsim_ah {
	struct ib_ah ibah;
	u32 ahn;
};

struct rsim_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct rsim_pbl pbl;
	u64 iova;
	u64 length;
	u32 pdn;
	u32 access;		/* RSIM_ACCESS_* */
	u8 level;
	u8 page_shift;
	u32 npages;
	u32 fbo;
	bool phys;		/* the DMA MR */
	bool fast_reg;
	/* fast registration: the driver-owned level 1 list */
	u32 max_pages;
	u32 fr_npages;
	u32 fr_fbo;
	struct list_head link;	/* rsim_dev.mrs, for debugfs */
};

/* ---- Ethernet (rsim_netdev.c) ------------------------------------------ */
struct rsim_eth_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;
};

struct rsim_eth_ring {
	struct rsim_dma_buf mem;	/* descriptors */
	struct rsim_eth_desc *desc;
	struct rsim_eth_buf *bufs;
	u32 depth;
	u32 mask;
	u32 prod;
	u32 cons;
	bool created;			/* CREATE_ETHQ done */
};

struct rsim_netdev_priv {
	struct rsim_dev *dev;
	struct net_device *netdev;
	struct napi_struct napi;
	struct rsim_eth_ring tx;
	struct rsim_eth_ring rx;
	spinlock_t tx_lock;		/* tx.prod and ETH_TX_DB */
	bool running;
	struct u64_stats_sync syncp;
	u64 rx_packets, rx_bytes, rx_errors, rx_dropped;
	u64 tx_packets, tx_bytes, tx_errors, tx_dropped;
};

/* ---- The device -------------------------------------------------------- */
struct rsim_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	void __iomem *db;		/* doorbell page 0 */
	unsigned long flags;
	struct rsim_caps caps;

	struct rsim_admin aq;
	struct rsim_aeq aeq;
	struct rsim_eq *eqs;
	u32 num_eqs;
	int nvec;
	bool admin_irq_requested;
	atomic_t admin_irqs;		/* vector 0 interrupts seen */
	bool aeq_overflow_reported;

	struct xarray qps;
	struct xarray cqs;
	struct xarray srqs;

	struct mutex kqp_lock;		/* kernel_qps */
	struct list_head kernel_qps;
	struct work_struct fatal_work;
	struct work_struct flush_work;
	struct work_struct port_work;

	/* from QUERY_DEVICE / QUERY_PORT */
	u64 node_guid;
	u64 sys_image_guid;
	u64 fw_ver;
	u32 vendor_id;
	u32 vendor_part_id;
	u32 hw_ver;
	u8 mac[ETH_ALEN];
	u32 eth_mtu;

	bool link_up;			/* device port state (QUERY_PORT) */
	bool ib_port_active;		/* last state reported to the IB core */
	spinlock_t port_lock;		/* link_up, ib_port_active */

	struct net_device *netdev;

	struct mutex mr_lock;		/* mrs */
	struct list_head mrs;

	struct mutex stats_lock;	/* stats_buf */
	struct rsim_dma_buf stats_buf;
	struct dma_pool *attr_pool;	/* 128-byte QP attribute blocks */

	struct dentry *debugfs;
};

static inline struct rsim_dev *to_rdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rsim_dev, ibdev);
}

static inline struct rsim_pd *to_rpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct rsim_pd, ibpd);
}

static inline struct rsim_cq *to_rcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rsim_cq, ibcq);
}

static inline struct rsim_qp *to_rqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rsim_qp, ibqp);
}

static inline struct rsim_srq *to_rsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rsim_srq, ibsrq);
}

static inline struct rsim_ah *to_rah(struct ib_ah *ibah)
{
	return container_of(ibah, struct rsim_ah, ibah);
}

static inline struct rsim_mr *to_rmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rsim_mr, ibmr);
}

static inline struct rsim_ucontext *to_ructx(struct ib_ucontext *ibuctx)
{
	return container_of(ibuctx, struct rsim_ucontext, ibucontext);
}

static inline struct rsim_mmap_entry *
to_rmentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct rsim_mmap_entry, rdma_entry);
}

static inline bool rsim_dead(struct rsim_dev *dev)
{
	return test_bit(RSIM_FLAG_DEAD, &dev->flags);
}

/*
 * For messages of code that may run before the RDMA device is registered
 * (probe, events from the device): ibdev_<level>, which names the RDMA
 * device, once it is registered; dev_<level>, which names the PCI function,
 * before (the RDMA device has no name yet).
 */
#define rsim_log(level, rdev, ...)					\
	do {								\
		struct rsim_dev *__rdev = (rdev);			\
									\
		if (test_bit(RSIM_FLAG_IB_REGISTERED, &__rdev->flags))	\
			ibdev_##level(&__rdev->ibdev, __VA_ARGS__);	\
		else							\
			dev_##level(&__rdev->pdev->dev, __VA_ARGS__);	\
	} while (0)

static inline u32 rsim_rd32(struct rsim_dev *dev, u32 reg)
{
	return readl(dev->regs + reg);
}

static inline void rsim_wr32(struct rsim_dev *dev, u32 reg, u32 val)
{
	writel(val, dev->regs + reg);
}

/*
 * A QP or SRQ by its number, for events and completions: a reference
 * that keeps it from being freed (its destroy waits for ->free).
 */
static inline struct rsim_qp *rsim_qp_get(struct rsim_dev *dev, u32 qpn)
{
	unsigned long flags;
	struct rsim_qp *qp;

	xa_lock_irqsave(&dev->qps, flags);
	qp = xa_load(&dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refcnt))
		qp = NULL;
	xa_unlock_irqrestore(&dev->qps, flags);
	return qp;
}

static inline void rsim_qp_put(struct rsim_qp *qp)
{
	if (refcount_dec_and_test(&qp->refcnt))
		complete(&qp->free);
}

static inline struct rsim_srq *rsim_srq_get(struct rsim_dev *dev, u32 srqn)
{
	unsigned long flags;
	struct rsim_srq *srq;

	xa_lock_irqsave(&dev->srqs, flags);
	srq = xa_load(&dev->srqs, srqn);
	if (srq && !refcount_inc_not_zero(&srq->refcnt))
		srq = NULL;
	xa_unlock_irqrestore(&dev->srqs, flags);
	return srq;
}

static inline void rsim_srq_put(struct rsim_srq *srq)
{
	if (refcount_dec_and_test(&srq->refcnt))
		complete(&srq->free);
}

/* rsim_admin.c */
int rsim_admin_init(struct rsim_dev *dev);
void rsim_admin_destroy(struct rsim_dev *dev);
void rsim_admin_process(struct rsim_dev *dev);
void rsim_admin_fail_all(struct rsim_dev *dev);
int rsim_admin_exec(struct rsim_dev *dev, struct rsim_admin_cmd *cmd,
		    struct rsim_admin_cqe *cqe, bool atomic);
int rsim_status_to_errno(u8 status);
const char *rsim_opcode_name(u8 opcode);
void rsim_dev_fatal(struct rsim_dev *dev, const char *why);
bool rsim_check_health(struct rsim_dev *dev);
const char *rsim_fatal_reason_name(u32 reason);
void rsim_destroy_refused(struct rsim_dev *dev, const char *what, u32 num,
			  int err);
int rsim_dma_alloc(struct rsim_dev *dev, struct rsim_dma_buf *b, size_t size);
void rsim_dma_free(struct rsim_dev *dev, struct rsim_dma_buf *b);

/* rsim_queue.c */
int rsim_pbl_alloc(struct rsim_dev *dev, struct rsim_pbl *pbl, u32 npages,
		   u8 page_shift);
void rsim_pbl_set(struct rsim_pbl *pbl, u32 index, u64 addr);
u64 rsim_pbl_get(const struct rsim_pbl *pbl, u32 index);
void rsim_pbl_free(struct rsim_dev *dev, struct rsim_pbl *pbl);
int rsim_ring_alloc(struct rsim_dev *dev, struct rsim_ring *ring, u32 depth,
		    u32 elem_size);
void rsim_ring_free(struct rsim_dev *dev, struct rsim_ring *ring);
void rsim_ring_cmd(const struct rsim_ring *ring, struct rsim_cmd_ring *r);
void rsim_ring_mark_new(struct rsim_ring *ring);
int rsim_ring_move_result(struct rsim_dev *dev, const char *cmd, u32 num,
			  int err, const struct rsim_ring *ring);
int rsim_ring_map_user(struct rsim_dev *dev, struct rsim_ring *ring,
		       struct ib_ucontext *uctx, struct mminfo *mi);
u32 rsim_ring_depth(u32 max_entries);
u32 rsim_sq_elem_size(u32 max_sge, u32 max_inline);
u32 rsim_rq_elem_size(u32 max_sge);

static inline void *rsim_ring_elem(const struct rsim_ring *ring, u32 index)
{
	return ring->buf + RSIM_QUEUE_DATA_OFFSET +
	       ((size_t)(index & ring->mask) << ring->log2_elem);
}

/*
 * Indices in the ring header, shared with the device (DMA) and, for user
 * rings, with a process: a load is followed by a read barrier (the
 * elements it publishes are read after it), a store is preceded by a
 * write barrier (the elements are written before it).  Always masked.
 */
static inline u32 rsim_ring_load_prod(const struct rsim_ring *ring)
{
	u32 v = le32_to_cpu(READ_ONCE(ring->hdr->producer_index));

	dma_rmb();	/* elements after the index that publishes them */
	return v & ring->mask;
}

static inline u32 rsim_ring_load_cons(const struct rsim_ring *ring)
{
	u32 v = le32_to_cpu(READ_ONCE(ring->hdr->consumer_index));

	dma_rmb();	/* slots are reused only after the consumer is done */
	return v & ring->mask;
}

static inline void rsim_ring_store_prod(struct rsim_ring *ring, u32 index)
{
	dma_wmb();	/* the new elements before the index */
	WRITE_ONCE(ring->hdr->producer_index, cpu_to_le32(index & ring->mask));
}

static inline void rsim_ring_store_cons(struct rsim_ring *ring, u32 index)
{
	dma_wmb();	/* done with the elements before handing them back */
	WRITE_ONCE(ring->hdr->consumer_index, cpu_to_le32(index & ring->mask));
}

/* rsim_kwq.c */
int rsim_kwq_init(struct rsim_kwq *q, u8 kind, u32 owner, u32 depth);
void rsim_kwq_free(struct rsim_kwq *q);
bool rsim_kwq_full(const struct rsim_kwq *q, u32 prod);
int rsim_kwq_srq_slot(struct rsim_kwq *q);
u64 rsim_kwq_post(struct rsim_kwq *q, u32 slot, u64 wr_id, u8 opcode,
		  u32 len, bool signaled);
u8 rsim_wc_opcode(enum ib_wr_opcode opcode);
void rsim_cqe_to_wc(const struct rsim_cqe *cqe, struct ib_wc *wc);
int rsim_kcq_poll(struct rsim_dev *dev, struct rsim_cq *cq, int num,
		  struct ib_wc *wc);
void rsim_qp_sw_flush(struct rsim_dev *dev, struct rsim_qp *qp);
void rsim_qp_kwq_reset(struct rsim_qp *qp);

/* rsim_verbs.c */
extern const struct ib_device_ops rsim_dev_ops;
int rsim_ib_register(struct rsim_dev *dev);
void rsim_ib_unregister(struct rsim_dev *dev);
int rsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int rsim_resize_cq(struct ib_cq *ibcq, u32 cqe, struct ib_udata *udata);
const struct cpumask *rsim_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector);
void rsim_qp_event(struct rsim_dev *dev, u32 qpn, enum ib_event_type type);
void rsim_srq_event(struct rsim_dev *dev, u32 srqn, enum ib_event_type type);
void rsim_cq_event(struct rsim_dev *dev, u32 cqn, enum ib_event_type type);
bool rsim_cq_comp_event(struct rsim_dev *dev, u32 cqn);
void rsim_cq_comp_event_all(struct rsim_dev *dev, u32 vector);
void rsim_flush_kernel_qps(struct rsim_dev *dev);
void rsim_flush_work(struct work_struct *work);

/* rsim_mr.c */
struct ib_mr *rsim_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *rsim_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);
int rsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *rsim_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int rsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
u32 rsim_access_to_hw(int ib_access);
const char *rsim_mr_kind(const struct rsim_mr *mr);

/* rsim_netdev.c */
int rsim_netdev_create(struct rsim_dev *dev);
void rsim_netdev_destroy(struct rsim_dev *dev);
void rsim_netdev_link_update(struct rsim_dev *dev);
void rsim_netdev_eth_event(struct rsim_dev *dev, u32 kind);
bool rsim_netdev_running(struct rsim_dev *dev);
void rsim_port_update(struct rsim_dev *dev);

/* rsim_debugfs.c */
void rsim_debugfs_init(void);
void rsim_debugfs_cleanup(void);
void rsim_debugfs_add(struct rsim_dev *dev);
void rsim_debugfs_remove(struct rsim_dev *dev);

/* rsim_restrack.c */
int rsim_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int rsim_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int rsim_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

#endif /* _RSIM_H_ */
