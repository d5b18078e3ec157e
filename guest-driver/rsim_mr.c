// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: memory registration (datasheet section 9).
 *
 * User MRs: the umem is described with the largest page size the device
 * supports that fits it (ib_umem_find_best_pgsz over CAP_PAGE_SIZES):
 * level 0 when its DMA blocks form one contiguous range, else a level 1
 * list (up to 512 pages) or a level 2 tree.  The DMA MR of each kernel PD
 * is a PHYS registration.  Fast-registration MRs own a level 1 list that
 * map_mr_sg fills and a REG_MR work request hands to the device.
 */

#include <rdma/iter.h>

#include "rsim.h"
#include "rsim_compat.h"

/* What debugfs and rdma resource show call an MR: dma, fast_reg or user */
const char *rsim_mr_kind(const struct rsim_mr *mr)
{
	return mr->phys ? "dma" : mr->fast_reg ? "fast_reg" : "user";
}

/* IB access flags the device understands (the same bit values) */
u32 rsim_access_to_hw(int ib_access)
{
	return ib_access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			    IB_ACCESS_MW_BIND);
}

static void rsim_mr_list_add(struct rsim_dev *dev, struct rsim_mr *mr)
{
	mutex_lock(&dev->mr_lock);
	list_add_tail(&mr->link, &dev->mrs);
	mutex_unlock(&dev->mr_lock);
}

static int rsim_mr_register(struct rsim_dev *dev, struct rsim_mr *mr,
			    const struct rsim_reg_mr_params *p)
{
	u32 lkey, rkey;
	int err;

	err = rsim_cmd_reg_mr(dev, p, &lkey, &rkey);
	if (err)
		return err;
	mr->ibmr.lkey = lkey;
	mr->ibmr.rkey = rkey;
	rsim_mr_list_add(dev, mr);
	return 0;
}

struct ib_mr *rsim_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rsim_dev *dev = to_rdev(ibpd->device);
	struct rsim_reg_mr_params p = {};
	struct rsim_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&mr->link);
	mr->phys = true;
	mr->pdn = to_rpd(ibpd)->pdn;
	mr->access = rsim_access_to_hw(access);
	p.pdn = mr->pdn;
	p.access = mr->access;
	p.phys = true;
	err = rsim_mr_register(dev, mr, &p);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* Are the umem's DMA blocks of size pgsz one contiguous range? */
static bool rsim_umem_contiguous(struct ib_umem *umem, unsigned long pgsz,
				 u64 *first)
{
	struct ib_block_iter biter;
	u64 next = 0;
	bool start = true;

	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		u64 addr = rdma_block_iter_dma_address(&biter);

		if (start) {
			*first = addr;
			start = false;
		} else if (addr != next) {
			return false;
		}
		next = addr + pgsz;
	}
	return !start;
}

struct ib_mr *rsim_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibpd->device);
	struct rsim_reg_mr_params p = {};
	struct ib_block_iter biter;
	unsigned long pgsz;
	struct rsim_mr *mr;
	u64 first = 0;
	u32 i = 0;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > dev->caps.max_mr_size)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&mr->link);
	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	pgsz = ib_umem_find_best_pgsz(mr->umem, dev->caps.page_sizes,
				      virt_addr);
	if (!pgsz) {
		err = -EINVAL;
		goto err_umem;
	}
	mr->iova = virt_addr;
	mr->length = length;
	mr->pdn = to_rpd(ibpd)->pdn;
	mr->access = rsim_access_to_hw(access);
	mr->page_shift = ilog2(pgsz);
	mr->npages = ib_umem_num_dma_blocks(mr->umem, pgsz);
	mr->fbo = ib_umem_dma_offset(mr->umem, pgsz);

	p.pdn = mr->pdn;
	p.access = mr->access;
	p.iova = virt_addr;
	p.length = length;
	if (rsim_umem_contiguous(mr->umem, pgsz, &first)) {
		/* One contiguous DMA range: no list at all. */
		mr->level = RSIM_PBL_LEVEL0;
		mr->pbl.level = RSIM_PBL_LEVEL0;
		mr->pbl.addr = first + mr->fbo;
		p.level = RSIM_PBL_LEVEL0;
		p.pbl_addr = mr->pbl.addr;
	} else {
		err = rsim_pbl_alloc(dev, &mr->pbl, mr->npages, mr->page_shift);
		if (err)
			goto err_umem;
		rdma_umem_for_each_dma_block(mr->umem, &biter, pgsz)
			rsim_pbl_set(&mr->pbl, i++,
				     rdma_block_iter_dma_address(&biter));
		mr->level = mr->pbl.level;
		p.level = mr->pbl.level;
		p.pbl_addr = mr->pbl.addr;
		p.npages = mr->npages;
		p.page_shift = mr->page_shift;
		p.fbo = mr->fbo;
	}
	err = rsim_mr_register(dev, mr, &p);
	if (err)
		goto err_pbl;
	return &mr->ibmr;

err_pbl:
	rsim_pbl_free(dev, &mr->pbl);
err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

int rsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibmr->device);
	struct rsim_mr *mr = to_rmr(ibmr);
	int err;

	err = rsim_cmd_dereg_mr(dev, ibmr->lkey);
	if (err)
		rsim_destroy_refused(dev, "MR", ibmr->lkey, err);
	mutex_lock(&dev->mr_lock);
	list_del(&mr->link);
	mutex_unlock(&dev->mr_lock);
	rsim_pbl_free(dev, &mr->pbl);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

struct ib_mr *rsim_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct rsim_dev *dev = to_rdev(ibpd->device);
	struct rsim_mr *mr;
	u32 key;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(dev->caps.features & R_RSIM_FEATURES_FAST_REG_MASK))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->caps.max_fast_reg_pages ||
	    max_num_sg > RSIM_PBL_L1_MAX)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&mr->link);
	mr->fast_reg = true;
	mr->max_pages = max_num_sg;
	mr->pdn = to_rpd(ibpd)->pdn;
	err = rsim_pbl_alloc(dev, &mr->pbl, max_num_sg, PAGE_SHIFT);
	if (err)
		goto err_free;
	if (WARN_ON(mr->pbl.level != RSIM_PBL_LEVEL1)) {
		err = -EINVAL;
		goto err_pbl;
	}
	mr->level = RSIM_PBL_LEVEL1;
	mr->page_shift = PAGE_SHIFT;
	err = rsim_cmd_alloc_stag(dev, mr->pdn, max_num_sg, mr->pbl.addr, &key);
	if (err)
		goto err_pbl;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	rsim_mr_list_add(dev, mr);
	return &mr->ibmr;

err_pbl:
	rsim_pbl_free(dev, &mr->pbl);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int rsim_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rsim_mr *mr = to_rmr(ibmr);

	if (mr->fr_npages >= mr->max_pages)
		return -ENOMEM;
	rsim_pbl_set(&mr->pbl, mr->fr_npages++, addr);
	return 0;
}

int rsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct rsim_dev *dev = to_rdev(ibmr->device);
	struct rsim_mr *mr = to_rmr(ibmr);
	int n;

	if (!mr->fast_reg || !is_power_of_2(ibmr->page_size) ||
	    !(dev->caps.page_sizes & ibmr->page_size))
		return -EINVAL;
	mr->fr_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rsim_set_page);
	/* Offset of the first byte in its page, before a ULP moves iova. */
	mr->fr_fbo = ibmr->iova & (ibmr->page_size - 1);
	mr->page_shift = ilog2(ibmr->page_size);
	mr->npages = mr->fr_npages;
	mr->fbo = mr->fr_fbo;
	mr->iova = ibmr->iova;
	mr->length = ibmr->length;
	return n;
}
