// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: page lists and Soft-RoCE format rings.
 *
 * Work and completion queues have the layout of the Soft-RoCE user ABI
 * (<rdma/rdma_user_rxe.h>), so that the stock rxe provider of rdma-core can
 * use them from user space.  A ring is vmalloc memory (mappable into a
 * process with remap_vmalloc_range); each page is DMA-mapped and the device
 * is given a page list: level 1 (one 4 KiB list) when the pages fit, else
 * level 2 (a root of 4 KiB leaf lists).  The memory is shared with the
 * device and possibly a process at the same time, which needs
 * cache-coherent DMA (as every Soft-RoCE-style ring does).
 */

#include <linux/dma-mapping.h>
#include <linux/vmalloc.h>

#include "rsim.h"

/*
 * The device consumes the Soft-RoCE formats byte for byte: check our
 * hardware header against the kernel's own definitions of that ABI.
 */
#define RSIM_SAME(a, fa, b, fb)						\
	static_assert(offsetof(struct a, fa) == offsetof(struct b, fb) &&	\
		      sizeof_field(struct a, fa) == sizeof_field(struct b, fb))

RSIM_SAME(rsim_send_wqe, wr_id, rxe_send_wqe, wr.wr_id);
RSIM_SAME(rsim_send_wqe, reserved0, rxe_send_wqe, wr.reserved);
RSIM_SAME(rsim_send_wqe, opcode, rxe_send_wqe, wr.opcode);
RSIM_SAME(rsim_send_wqe, send_flags, rxe_send_wqe, wr.send_flags);
RSIM_SAME(rsim_send_wqe, ex, rxe_send_wqe, wr.ex);
RSIM_SAME(rsim_send_wqe, wr, rxe_send_wqe, wr.wr);
RSIM_SAME(rsim_send_wqe, wr.rdma.remote_addr, rxe_send_wqe,
	  wr.wr.rdma.remote_addr);
RSIM_SAME(rsim_send_wqe, wr.rdma.rkey, rxe_send_wqe, wr.wr.rdma.rkey);
RSIM_SAME(rsim_send_wqe, wr.atomic.remote_addr, rxe_send_wqe,
	  wr.wr.atomic.remote_addr);
RSIM_SAME(rsim_send_wqe, wr.atomic.compare_add, rxe_send_wqe,
	  wr.wr.atomic.compare_add);
RSIM_SAME(rsim_send_wqe, wr.atomic.swap, rxe_send_wqe, wr.wr.atomic.swap);
RSIM_SAME(rsim_send_wqe, wr.atomic.rkey, rxe_send_wqe, wr.wr.atomic.rkey);
RSIM_SAME(rsim_send_wqe, wr.ud.remote_qpn, rxe_send_wqe,
	  wr.wr.ud.remote_qpn);
RSIM_SAME(rsim_send_wqe, wr.ud.remote_qkey, rxe_send_wqe,
	  wr.wr.ud.remote_qkey);
RSIM_SAME(rsim_send_wqe, wr.ud.pkey_index, rxe_send_wqe,
	  wr.wr.ud.pkey_index);
RSIM_SAME(rsim_send_wqe, wr.ud.ah_num, rxe_send_wqe, wr.wr.ud.ah_num);
RSIM_SAME(rsim_send_wqe, wr.ud.av, rxe_send_wqe, wr.wr.ud.av);
RSIM_SAME(rsim_send_wqe, status, rxe_send_wqe, status);
RSIM_SAME(rsim_send_wqe, state, rxe_send_wqe, state);
RSIM_SAME(rsim_send_wqe, iova, rxe_send_wqe, iova);
RSIM_SAME(rsim_send_wqe, mask, rxe_send_wqe, mask);
RSIM_SAME(rsim_send_wqe, first_psn, rxe_send_wqe, first_psn);
RSIM_SAME(rsim_send_wqe, last_psn, rxe_send_wqe, last_psn);
RSIM_SAME(rsim_send_wqe, ack_length, rxe_send_wqe, ack_length);
RSIM_SAME(rsim_send_wqe, ssn, rxe_send_wqe, ssn);
RSIM_SAME(rsim_send_wqe, has_rd_atomic, rxe_send_wqe, has_rd_atomic);
RSIM_SAME(rsim_send_wqe, dma.length, rxe_send_wqe, dma.length);
RSIM_SAME(rsim_send_wqe, dma.resid, rxe_send_wqe, dma.resid);
RSIM_SAME(rsim_send_wqe, dma.cur_sge, rxe_send_wqe, dma.cur_sge);
RSIM_SAME(rsim_send_wqe, dma.num_sge, rxe_send_wqe, dma.num_sge);
RSIM_SAME(rsim_send_wqe, dma.sge_offset, rxe_send_wqe, dma.sge_offset);
static_assert(offsetof(struct rsim_send_wqe, sge) ==
	      offsetof(struct rxe_send_wqe, dma.sge));
static_assert(offsetof(struct rsim_send_wqe, sge) ==
	      offsetof(struct rxe_send_wqe, dma.inline_data));
static_assert(sizeof(struct rsim_send_wqe) == sizeof(struct rxe_send_wqe));

RSIM_SAME(rsim_recv_wqe, wr_id, rxe_recv_wqe, wr_id);
RSIM_SAME(rsim_recv_wqe, reserved, rxe_recv_wqe, reserved);
RSIM_SAME(rsim_recv_wqe, padding, rxe_recv_wqe, padding);
RSIM_SAME(rsim_recv_wqe, dma.length, rxe_recv_wqe, dma.length);
RSIM_SAME(rsim_recv_wqe, dma.resid, rxe_recv_wqe, dma.resid);
RSIM_SAME(rsim_recv_wqe, dma.cur_sge, rxe_recv_wqe, dma.cur_sge);
RSIM_SAME(rsim_recv_wqe, dma.num_sge, rxe_recv_wqe, dma.num_sge);
RSIM_SAME(rsim_recv_wqe, dma.sge_offset, rxe_recv_wqe, dma.sge_offset);
static_assert(offsetof(struct rsim_recv_wqe, sge) ==
	      offsetof(struct rxe_recv_wqe, dma.sge));
static_assert(sizeof(struct rsim_recv_wqe) == sizeof(struct rxe_recv_wqe));

RSIM_SAME(rsim_sge, addr, rxe_sge, addr);
RSIM_SAME(rsim_sge, length, rxe_sge, length);
RSIM_SAME(rsim_sge, lkey, rxe_sge, lkey);
static_assert(sizeof(struct rsim_sge) == sizeof(struct rxe_sge));
static_assert(sizeof(struct rsim_sge) == sizeof(struct ib_sge));

RSIM_SAME(rsim_cqe, wr_id, ib_uverbs_wc, wr_id);
RSIM_SAME(rsim_cqe, status, ib_uverbs_wc, status);
RSIM_SAME(rsim_cqe, opcode, ib_uverbs_wc, opcode);
RSIM_SAME(rsim_cqe, vendor_err, ib_uverbs_wc, vendor_err);
RSIM_SAME(rsim_cqe, byte_len, ib_uverbs_wc, byte_len);
RSIM_SAME(rsim_cqe, ex, ib_uverbs_wc, ex);
RSIM_SAME(rsim_cqe, qp_num, ib_uverbs_wc, qp_num);
RSIM_SAME(rsim_cqe, src_qp, ib_uverbs_wc, src_qp);
RSIM_SAME(rsim_cqe, wc_flags, ib_uverbs_wc, wc_flags);
RSIM_SAME(rsim_cqe, pkey_index, ib_uverbs_wc, pkey_index);
RSIM_SAME(rsim_cqe, slid, ib_uverbs_wc, slid);
RSIM_SAME(rsim_cqe, sl, ib_uverbs_wc, sl);
RSIM_SAME(rsim_cqe, dlid_path_bits, ib_uverbs_wc, dlid_path_bits);
RSIM_SAME(rsim_cqe, port_num, ib_uverbs_wc, port_num);
static_assert(sizeof(struct rsim_cqe) == sizeof(struct ib_uverbs_wc));
static_assert(sizeof(struct rsim_cqe) <= (1 << RSIM_CQE_LOG2_SLOT));

RSIM_SAME(rsim_queue_header, log2_elem_size, rxe_queue_buf, log2_elem_size);
RSIM_SAME(rsim_queue_header, index_mask, rxe_queue_buf, index_mask);
RSIM_SAME(rsim_queue_header, producer_index, rxe_queue_buf, producer_index);
RSIM_SAME(rsim_queue_header, consumer_index, rxe_queue_buf, consumer_index);
static_assert(sizeof(struct rsim_queue_header) ==
	      offsetof(struct rxe_queue_buf, data));
static_assert(sizeof(struct rsim_queue_header) == RSIM_QUEUE_DATA_OFFSET);

/* The user-visible opcodes and flags are the kernel's IB_* values. */
#define RSIM_SAME_VALUE(a, b) static_assert((int)(a) == (int)(b))
RSIM_SAME_VALUE(RSIM_WR_RDMA_WRITE, IB_WR_RDMA_WRITE);
RSIM_SAME_VALUE(RSIM_WR_RDMA_WRITE_WITH_IMM, IB_WR_RDMA_WRITE_WITH_IMM);
RSIM_SAME_VALUE(RSIM_WR_SEND, IB_WR_SEND);
RSIM_SAME_VALUE(RSIM_WR_SEND_WITH_IMM, IB_WR_SEND_WITH_IMM);
RSIM_SAME_VALUE(RSIM_WR_RDMA_READ, IB_WR_RDMA_READ);
RSIM_SAME_VALUE(RSIM_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_CMP_AND_SWP);
RSIM_SAME_VALUE(RSIM_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_FETCH_AND_ADD);
RSIM_SAME_VALUE(RSIM_WR_LOCAL_INV, IB_WR_LOCAL_INV);
RSIM_SAME_VALUE(RSIM_WR_SEND_WITH_INV, IB_WR_SEND_WITH_INV);
RSIM_SAME_VALUE(RSIM_WR_REG_MR, IB_WR_REG_MR);
RSIM_SAME_VALUE(RSIM_SEND_FENCE, IB_SEND_FENCE);
RSIM_SAME_VALUE(RSIM_SEND_SIGNALED, IB_SEND_SIGNALED);
RSIM_SAME_VALUE(RSIM_SEND_SOLICITED, IB_SEND_SOLICITED);
RSIM_SAME_VALUE(RSIM_SEND_INLINE, IB_SEND_INLINE);
RSIM_SAME_VALUE(RSIM_WC_SUCCESS, IB_WC_SUCCESS);
RSIM_SAME_VALUE(RSIM_WC_WR_FLUSH_ERR, IB_WC_WR_FLUSH_ERR);
RSIM_SAME_VALUE(RSIM_WC_GENERAL_ERR, IB_WC_GENERAL_ERR);
RSIM_SAME_VALUE(RSIM_WC_RECV, IB_WC_RECV);
RSIM_SAME_VALUE(RSIM_WC_RECV_RDMA_WITH_IMM, IB_WC_RECV_RDMA_WITH_IMM);
RSIM_SAME_VALUE(RSIM_ACCESS_LOCAL_WRITE, IB_ACCESS_LOCAL_WRITE);
RSIM_SAME_VALUE(RSIM_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_WRITE);
RSIM_SAME_VALUE(RSIM_ACCESS_REMOTE_READ, IB_ACCESS_REMOTE_READ);
RSIM_SAME_VALUE(RSIM_ACCESS_REMOTE_ATOMIC, IB_ACCESS_REMOTE_ATOMIC);
RSIM_SAME_VALUE(RSIM_ACCESS_MW_BIND, IB_ACCESS_MW_BIND);
RSIM_SAME_VALUE(RSIM_ACCESS_ZERO_BASED, IB_ZERO_BASED);
RSIM_SAME_VALUE(RSIM_QP_DEST_QPN, IB_QP_DEST_QPN);
RSIM_SAME_VALUE(RSIM_QP_ALT_PATH, IB_QP_ALT_PATH);
RSIM_SAME_VALUE(RSIM_QP_STATE, IB_QP_STATE);

/* ---- Page lists -------------------------------------------------------- */

static int rsim_pbl_page_alloc(struct rsim_dev *dev, struct rsim_pbl_page *p,
			       size_t size)
{
	p->size = size;
	p->va = dma_alloc_coherent(&dev->pdev->dev, size, &p->dma, GFP_KERNEL);
	return p->va ? 0 : -ENOMEM;
}

static void rsim_pbl_page_free(struct rsim_dev *dev, struct rsim_pbl_page *p)
{
	if (p->va)
		dma_free_coherent(&dev->pdev->dev, p->size, p->va, p->dma);
	p->va = NULL;
}

/*
 * Allocate the lists for npages pages of 2^page_shift bytes: level 1 when
 * they fit one 4 KiB list, else level 2.  Entries are set with
 * rsim_pbl_set().  (Level 0 needs no lists: the caller sets level/addr.)
 */
int rsim_pbl_alloc(struct rsim_dev *dev, struct rsim_pbl *pbl, u32 npages,
		   u8 page_shift)
{
	u32 l1_max = min_t(u32, RSIM_PBL_L1_MAX, dev->caps.max_pbl_l1);
	u32 i;
	int err;

	memset(pbl, 0, sizeof(*pbl));
	if (!npages)
		return -EINVAL;
	pbl->npages = npages;
	pbl->page_shift = page_shift;
	if (npages <= l1_max) {
		pbl->level = RSIM_PBL_LEVEL1;
		err = rsim_pbl_page_alloc(dev, &pbl->top,
					  npages * RSIM_PBL_ENTRY_SIZE);
		if (err)
			return err;
		pbl->addr = pbl->top.dma;
		return 0;
	}

	pbl->level = RSIM_PBL_LEVEL2;
	pbl->nleaves = DIV_ROUND_UP(npages, RSIM_PBL_LEAF_ENTRIES);
	if (pbl->nleaves > dev->caps.max_pbl_root)
		return -EINVAL;
	err = rsim_pbl_page_alloc(dev, &pbl->top,
				  pbl->nleaves * RSIM_PBL_ENTRY_SIZE);
	if (err)
		return err;
	pbl->leaves = kvcalloc(pbl->nleaves, sizeof(*pbl->leaves), GFP_KERNEL);
	if (!pbl->leaves) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < pbl->nleaves; i++) {
		err = rsim_pbl_page_alloc(dev, &pbl->leaves[i],
					  RSIM_PBL_LEAF_ENTRIES *
					  RSIM_PBL_ENTRY_SIZE);
		if (err)
			goto err_free;
		pbl->top.va[i] = cpu_to_le64(pbl->leaves[i].dma);
	}
	pbl->addr = pbl->top.dma;
	return 0;

err_free:
	rsim_pbl_free(dev, pbl);
	return err;
}

void rsim_pbl_set(struct rsim_pbl *pbl, u32 index, u64 addr)
{
	if (WARN_ON_ONCE(index >= pbl->npages))
		return;
	if (pbl->level == RSIM_PBL_LEVEL1)
		pbl->top.va[index] = cpu_to_le64(addr);
	else if (pbl->level == RSIM_PBL_LEVEL2)
		pbl->leaves[index / RSIM_PBL_LEAF_ENTRIES]
			.va[index % RSIM_PBL_LEAF_ENTRIES] = cpu_to_le64(addr);
}

u64 rsim_pbl_get(const struct rsim_pbl *pbl, u32 index)
{
	if (index >= pbl->npages)
		return 0;
	if (pbl->level == RSIM_PBL_LEVEL1)
		return le64_to_cpu(pbl->top.va[index]);
	if (pbl->level == RSIM_PBL_LEVEL2)
		return le64_to_cpu(pbl->leaves[index / RSIM_PBL_LEAF_ENTRIES]
				   .va[index % RSIM_PBL_LEAF_ENTRIES]);
	return pbl->addr;
}

void rsim_pbl_free(struct rsim_dev *dev, struct rsim_pbl *pbl)
{
	u32 i;

	if (pbl->leaves) {
		for (i = 0; i < pbl->nleaves; i++)
			rsim_pbl_page_free(dev, &pbl->leaves[i]);
		kvfree(pbl->leaves);
	}
	rsim_pbl_page_free(dev, &pbl->top);
	memset(pbl, 0, sizeof(*pbl));
}

/* ---- Rings ------------------------------------------------------------- */

/* Slots for max_entries usable entries: one slot always stays empty. */
u32 rsim_ring_depth(u32 max_entries)
{
	return max_t(u32, 2, roundup_pow_of_two(max_entries + 1));
}

/* As Soft-RoCE: header + max(SGEs, inline data), at least a cache line. */
u32 rsim_sq_elem_size(u32 max_sge, u32 max_inline)
{
	u32 size = RSIM_SEND_WQE_HDR_SIZE +
		   max_t(u32, max_sge * sizeof(struct rsim_sge), max_inline);

	return roundup_pow_of_two(max_t(u32, size, SMP_CACHE_BYTES));
}

u32 rsim_rq_elem_size(u32 max_sge)
{
	u32 size = RSIM_RECV_WQE_HDR_SIZE + max_sge * sizeof(struct rsim_sge);

	return roundup_pow_of_two(max_t(u32, size, SMP_CACHE_BYTES));
}

/* A ring of depth elements (a power of two) of elem_size bytes (idem). */
int rsim_ring_alloc(struct rsim_dev *dev, struct rsim_ring *ring, u32 depth,
		    u32 elem_size)
{
	struct device *dma_dev = &dev->pdev->dev;
	size_t bytes;
	u32 i;
	int err;

	memset(ring, 0, sizeof(*ring));
	if (!is_power_of_2(depth) || !is_power_of_2(elem_size) || depth < 2)
		return -EINVAL;
	bytes = RSIM_QUEUE_DATA_OFFSET + (size_t)depth * elem_size;
	ring->size = PAGE_ALIGN(bytes);
	ring->npages = ring->size >> PAGE_SHIFT;
	ring->depth = depth;
	ring->mask = depth - 1;
	ring->log2_elem = ilog2(elem_size);

	ring->buf = vmalloc_user(ring->size);
	if (!ring->buf)
		return -ENOMEM;
	ring->hdr = ring->buf;
	ring->dma = kvcalloc(ring->npages, sizeof(*ring->dma), GFP_KERNEL);
	if (!ring->dma) {
		err = -ENOMEM;
		goto err_buf;
	}
	for (i = 0; i < ring->npages; i++) {
		struct page *page = vmalloc_to_page(ring->buf + i * PAGE_SIZE);

		ring->dma[i] = dma_map_page(dma_dev, page, 0, PAGE_SIZE,
					    DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dma_dev, ring->dma[i])) {
			err = -ENOMEM;
			goto err_unmap;
		}
	}
	err = rsim_pbl_alloc(dev, &ring->pbl, ring->npages, PAGE_SHIFT);
	if (err)
		goto err_unmap;
	for (i = 0; i < ring->npages; i++)
		rsim_pbl_set(&ring->pbl, i, ring->dma[i]);

	ring->hdr->log2_elem_size = cpu_to_le32(ring->log2_elem);
	ring->hdr->index_mask = cpu_to_le32(ring->mask);
	return 0;

err_unmap:
	while (i--)
		dma_unmap_page(dma_dev, ring->dma[i], PAGE_SIZE,
			       DMA_BIDIRECTIONAL);
	kvfree(ring->dma);
	ring->dma = NULL;
err_buf:
	vfree(ring->buf);
	ring->buf = NULL;
	return err;
}

/*
 * RESIZE_CQ and MODIFY_SRQ move a queue to a new ring and set the new
 * ring's producer index when they do (datasheet section 5), as the last
 * step before the device uses it.  It starts out of range, so whether the
 * device moved is known without believing the command's completion,
 * which the device may have damaged.
 */
#define RSIM_RING_NOT_TAKEN	U32_MAX

void rsim_ring_mark_new(struct rsim_ring *ring)
{
	WRITE_ONCE(ring->hdr->producer_index, cpu_to_le32(RSIM_RING_NOT_TAKEN));
}

/*
 * The outcome of a command that moves a queue to ring, given the errno of
 * its completion: 0 if the device uses the new ring, else an errno.
 */
int rsim_ring_move_result(struct rsim_dev *dev, const char *cmd, u32 num,
			  int err, const struct rsim_ring *ring)
{
	bool moved;

	/* A device reset makes no more DMA: either ring is safe to free. */
	if (rsim_dead(dev))
		return err;
	moved = le32_to_cpu(READ_ONCE(ring->hdr->producer_index)) !=
		RSIM_RING_NOT_TAKEN;
	if (moved == !err)
		return err;
	if (moved) {
		rsim_log(warn_ratelimited, dev,
			 "%s of %u failed (%d), but the device moved to the new ring: it is used\n",
			 cmd, num, err);
		return 0;
	}
	rsim_log(warn_ratelimited, dev,
		 "%s of %u completed, but the device did not move to the new ring: failing the command\n",
		 cmd, num);
	return -EIO;
}

/*
 * Release a ring the device no longer uses.  A ring mapped by a process
 * belongs to its mmap entry from now on: the memory is freed when the
 * entry is (rsim_mmap_free); pages still mapped stay valid until munmap.
 */
void rsim_ring_free(struct rsim_dev *dev, struct rsim_ring *ring)
{
	u32 i;

	if (!ring->buf)
		return;
	rsim_pbl_free(dev, &ring->pbl);
	if (ring->dma) {
		for (i = 0; i < ring->npages; i++)
			dma_unmap_page(&dev->pdev->dev, ring->dma[i], PAGE_SIZE,
				       DMA_BIDIRECTIONAL);
		kvfree(ring->dma);
		ring->dma = NULL;
	}
	if (ring->mentry)
		rdma_user_mmap_entry_remove(&ring->mentry->rdma_entry);
	else
		vfree(ring->buf);
	ring->mentry = NULL;
	ring->buf = NULL;
	ring->hdr = NULL;
}

/* The ring descriptor of a command (rsim_queue_desc) */
void rsim_ring_cmd(const struct rsim_ring *ring, struct rsim_cmd_ring *r)
{
	r->addr = ring->pbl.addr;
	r->level = ring->pbl.level;
	r->page_shift = ring->pbl.page_shift;
	r->log2_elem_size = ring->log2_elem;
	r->log2_depth = ilog2(ring->depth);
	r->npages = ring->pbl.npages;
}

/* Make the ring mappable by the process of uctx; mi says where. */
int rsim_ring_map_user(struct rsim_dev *dev, struct rsim_ring *ring,
		       struct ib_ucontext *uctx, struct mminfo *mi)
{
	struct rsim_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->buf = ring->buf;
	e->size = ring->size;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma_entry, ring->size);
	if (err) {
		kfree(e);
		return err;
	}
	ring->mentry = e;
	mi->offset = rdma_user_mmap_get_offset(&e->rdma_entry);
	mi->size = ring->size;
	mi->pad = 0;
	return 0;
}
