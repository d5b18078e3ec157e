// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: debugfs diagnostics.
 *
 * /sys/kernel/debug/rdma_sim/<pci name>/
 *   mrs     one line per registered MR: its key, length, page list (level,
 *           page shift, pages) and the device's MR_TRANSLATE of the first
 *           (and last) byte compared with the DMA address the driver
 *           expects: result=ok, MISMATCH, or ERROR (the refusal).  The VM tests check PBL levels
 *           on the device side with it.
 *   status  the device's health registers and the driver's view.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rsim.h"

static struct dentry *rsim_debugfs_root;

/* DMA address the driver expects for byte off of the MR */
static u64 rsim_mr_expected(const struct rsim_mr *mr, u64 off)
{
	u64 pos, mask;

	if (mr->level == RSIM_PBL_LEVEL0)
		return mr->pbl.addr + off;
	pos = mr->fbo + off;
	mask = (1ULL << mr->page_shift) - 1;
	return rsim_pbl_get(&mr->pbl, pos >> mr->page_shift) + (pos & mask);
}

/* MR_TRANSLATE of byte off; returns the verdict. */
static const char *rsim_mr_check(struct rsim_dev *dev, struct rsim_mr *mr,
				 u64 off, struct rsim_mr_translate_result *res,
				 u64 *expected, int *err)
{
	memset(res, 0, sizeof(*res));
	*expected = rsim_mr_expected(mr, off);
	*err = rsim_cmd_mr_translate(dev, mr->ibmr.lkey, mr->pdn, 0,
				     mr->iova + off, 1, res);
	if (*err)
		return "ERROR";
	if (res->addr != *expected ||
	    (mr->level != RSIM_PBL_LEVEL0 && res->level != mr->level))
		return "MISMATCH";
	return "ok";
}

/*
 * One line per MR: the first byte is checked (dev_addr/expected), and the
 * last byte too (result=ok only if both translate as expected).
 */
static int rsim_mrs_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *dev = m->private;
	struct rsim_mr_translate_result res, res_last;
	const char *first, *last, *verdict;
	u64 expected, expected_last;
	struct rsim_mr *mr;
	int err, err_last;

	seq_puts(m, "# lkey kind length level page_shift npages iova dev_level dev_addr expected last_dev_addr last_expected result\n");
	mutex_lock(&dev->mr_lock);
	list_for_each_entry(mr, &dev->mrs, link) {
		if (mr->phys) {
			seq_printf(m, "lkey=0x%08x kind=dma pd=%u access=0x%x result=phys\n",
				   mr->ibmr.lkey, mr->pdn, mr->access);
			continue;
		}
		if (mr->fast_reg && !mr->fr_npages) {
			seq_printf(m, "lkey=0x%08x kind=fast_reg pd=%u max_pages=%u level=%u result=unmapped\n",
				   mr->ibmr.lkey, mr->pdn, mr->max_pages,
				   mr->level);
			continue;
		}
		first = rsim_mr_check(dev, mr, 0, &res, &expected, &err);
		last = rsim_mr_check(dev, mr, mr->length - 1, &res_last,
				     &expected_last, &err_last);
		verdict = strcmp(first, "ok") ? first : last;
		seq_printf(m, "lkey=0x%08x kind=%s length=%llu level=%u page_shift=%u npages=%u iova=0x%llx dev_level=%u dev_addr=0x%llx expected=0x%llx last_dev_addr=0x%llx last_expected=0x%llx result=%s",
			   mr->ibmr.lkey, rsim_mr_kind(mr),
			   mr->length, mr->level, mr->page_shift, mr->npages,
			   mr->iova, res.level, res.addr, expected,
			   res_last.addr, expected_last, verdict);
		if (err || err_last)
			seq_printf(m, "(%d/%d)", err, err_last);
		seq_putc(m, '\n');
	}
	mutex_unlock(&dev->mr_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_mrs);

static int rsim_status_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *dev = m->private;

	seq_printf(m, "dead: %d\n", rsim_dead(dev));
	seq_printf(m, "dev_status: 0x%08x\n", rsim_rd32(dev, A_RSIM_DEV_STATUS));
	seq_printf(m, "link_up: %d\n", dev->link_up);
	seq_printf(m, "ib_port_active: %d\n", dev->ib_port_active);
	seq_printf(m, "completion_eqs: %u\n", dev->num_eqs);
	seq_printf(m, "admin_timeout_ms: %u\n", dev->caps.admin_timeout_ms);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_status);

/* One line per completion EQ: which MSI-X vector, IRQ and CPUs serve it. */
static int rsim_eqs_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *dev = m->private;
	const struct cpumask *cpus;
	struct rsim_eq *eq;
	u32 i;

	for (i = 0; dev->eqs && i < dev->num_eqs; i++) {
		eq = &dev->eqs[i];
		cpus = pci_irq_get_affinity(dev->pdev, eq->vector);
		seq_printf(m, "comp_vector %u: eqn %u msix %u irq %d depth %u head %u cpus %*pbl\n",
			   i, eq->eqn, eq->vector,
			   pci_irq_vector(dev->pdev, eq->vector), eq->depth,
			   eq->head, cpumask_pr_args(cpus ? cpus : cpu_none_mask));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_eqs);

void rsim_debugfs_add(struct rsim_dev *dev)
{
	if (!rsim_debugfs_root)
		return;
	dev->debugfs = debugfs_create_dir(pci_name(dev->pdev),
					  rsim_debugfs_root);
	debugfs_create_file("mrs", 0400, dev->debugfs, dev, &rsim_mrs_fops);
	debugfs_create_file("eqs", 0400, dev->debugfs, dev, &rsim_eqs_fops);
	debugfs_create_file("status", 0400, dev->debugfs, dev,
			    &rsim_status_fops);
}

void rsim_debugfs_remove(struct rsim_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}

void rsim_debugfs_init(void)
{
	rsim_debugfs_root = debugfs_create_dir(DRV_MODULE_NAME, NULL);
	if (IS_ERR(rsim_debugfs_root))
		rsim_debugfs_root = NULL;
}

void rsim_debugfs_cleanup(void)
{
	debugfs_remove_recursive(rsim_debugfs_root);
	rsim_debugfs_root = NULL;
}
