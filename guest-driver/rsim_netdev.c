// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: the port's Ethernet net_device (datasheet
 * section 10).
 *
 * Non-RoCE traffic uses two descriptor rings created with CREATE_ETHQ,
 * both reporting to completion EQ 0.  The device raises an ETH event only
 * for a descriptor completed while the ring is armed, and arming is a
 * doorbell write: NAPI cleans both rings, re-arms them when it completes
 * and then looks at the rings once more, so nothing completed in between
 * is left waiting.  Frames are single buffers (no scatter-gather), RX
 * buffers are RSIM_ETH_MIN_RX_BUF bytes as the datasheet requires.
 *
 * The IB port's state follows the link and this net_device (the RoCE GIDs
 * live on it): rsim_port_update, at the end.
 */

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>

#include "rsim.h"

#define RSIM_TX_WAKE_THRESHOLD	8

static struct rsim_netdev_priv *rsim_priv(struct rsim_dev *dev)
{
	struct net_device *nd = READ_ONCE(dev->netdev);

	return nd ? netdev_priv(nd) : NULL;
}

bool rsim_netdev_running(struct rsim_dev *dev)
{
	struct net_device *nd = READ_ONCE(dev->netdev);

	return nd && netif_running(nd);
}

/* Carrier follows the device's port state (caller holds port_lock). */
void rsim_netdev_link_update(struct rsim_dev *dev)
{
	struct net_device *nd = dev->netdev;

	if (!nd)
		return;
	if (dev->link_up && !rsim_dead(dev))
		netif_carrier_on(nd);
	else
		netif_carrier_off(nd);
}

/* ETH event from a completion EQ (interrupt context) */
void rsim_netdev_eth_event(struct rsim_dev *dev, u32 kind)
{
	struct rsim_netdev_priv *priv = rsim_priv(dev);

	if (priv && kind <= RSIM_ETHQ_RX)
		napi_schedule(&priv->napi);
}

static u32 rsim_eth_free_slots(const struct rsim_eth_ring *r)
{
	return (READ_ONCE(r->cons) - r->prod - 1) & r->mask;
}

static bool rsim_eth_desc_done(const struct rsim_eth_ring *r, u32 index)
{
	return le16_to_cpu(READ_ONCE(r->desc[index].flags)) &
	       RSIM_ETH_DESC_DONE;
}

static int rsim_eth_ring_alloc(struct rsim_dev *dev, struct rsim_eth_ring *r,
			       u32 depth)
{
	memset(r, 0, sizeof(*r));
	r->depth = depth;
	r->mask = depth - 1;
	if (rsim_dma_alloc(dev, &r->mem, depth * RSIM_ETH_DESC_SIZE))
		return -ENOMEM;
	r->desc = r->mem.va;
	r->bufs = kcalloc(depth, sizeof(*r->bufs), GFP_KERNEL);
	if (!r->bufs) {
		rsim_dma_free(dev, &r->mem);
		return -ENOMEM;
	}
	return 0;
}

/* The device no longer uses the ring: unmap and free what is left. */
static void rsim_eth_ring_free(struct rsim_dev *dev, struct rsim_eth_ring *r,
			       enum dma_data_direction dir)
{
	u32 i;

	if (r->bufs) {
		for (i = 0; i < r->depth; i++) {
			if (!r->bufs[i].skb)
				continue;
			dma_unmap_single(&dev->pdev->dev, r->bufs[i].dma,
					 r->bufs[i].len, dir);
			dev_kfree_skb_any(r->bufs[i].skb);
		}
		kfree(r->bufs);
	}
	rsim_dma_free(dev, &r->mem);
	memset(r, 0, sizeof(*r));
}

static void rsim_rx_doorbell(struct rsim_netdev_priv *priv, bool arm)
{
	if (rsim_dead(priv->dev))
		return;
	rsim_wr32(priv->dev, A_RSIM_ETH_RX_DB,
		  FIELD_PREP(R_RSIM_ETH_RX_DB_PROD_MASK, priv->rx.prod) |
		  (arm ? R_RSIM_ETH_RX_DB_ARM_MASK : 0));
}

/* Post empty buffers up to a full ring; returns how many were posted. */
static u32 rsim_rx_refill(struct rsim_netdev_priv *priv, gfp_t gfp)
{
	struct device *dma_dev = &priv->dev->pdev->dev;
	struct rsim_eth_ring *r = &priv->rx;
	struct rsim_eth_desc *d;
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 n = 0;

	while (((r->prod + 1) & r->mask) != r->cons) {
		skb = __netdev_alloc_skb_ip_align(priv->netdev, RSIM_ETH_RX_BUF,
						  gfp);
		if (!skb)
			break;
		dma = dma_map_single(dma_dev, skb->data, RSIM_ETH_RX_BUF,
				     DMA_FROM_DEVICE);
		if (dma_mapping_error(dma_dev, dma)) {
			dev_kfree_skb_any(skb);
			break;
		}
		r->bufs[r->prod].skb = skb;
		r->bufs[r->prod].dma = dma;
		r->bufs[r->prod].len = RSIM_ETH_RX_BUF;
		d = &r->desc[r->prod];
		d->addr = cpu_to_le64(dma);
		d->len = cpu_to_le16(RSIM_ETH_RX_BUF);
		d->reserved = 0;
		d->flags = 0;
		r->prod = (r->prod + 1) & r->mask;
		n++;
	}
	return n;
}

static int rsim_rx(struct rsim_netdev_priv *priv, int budget)
{
	struct device *dma_dev = &priv->dev->pdev->dev;
	struct rsim_eth_ring *r = &priv->rx;
	u64 packets = 0, bytes = 0, errors = 0;
	struct rsim_eth_buf *b;
	struct sk_buff *skb;
	u16 flags, len;
	int done = 0;

	while (done < budget && r->cons != r->prod &&
	       rsim_eth_desc_done(r, r->cons)) {
		/* The device wrote len before flags. */
		dma_rmb();
		flags = le16_to_cpu(r->desc[r->cons].flags);
		len = le16_to_cpu(r->desc[r->cons].len);
		b = &r->bufs[r->cons];
		skb = b->skb;
		b->skb = NULL;
		dma_unmap_single(dma_dev, b->dma, b->len, DMA_FROM_DEVICE);
		r->cons = (r->cons + 1) & r->mask;
		done++;
		if ((flags & RSIM_ETH_DESC_ERR) || len < ETH_HLEN ||
		    len > RSIM_ETH_RX_BUF) {
			errors++;
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, priv->netdev);
		packets++;
		bytes += len;
		napi_gro_receive(&priv->napi, skb);
	}
	if (rsim_rx_refill(priv, GFP_ATOMIC))
		rsim_rx_doorbell(priv, false);

	u64_stats_update_begin(&priv->syncp);
	priv->rx_packets += packets;
	priv->rx_bytes += bytes;
	priv->rx_errors += errors;
	u64_stats_update_end(&priv->syncp);
	return done;
}

static void rsim_tx_clean(struct rsim_netdev_priv *priv)
{
	struct device *dma_dev = &priv->dev->pdev->dev;
	struct rsim_eth_ring *r = &priv->tx;
	u64 packets = 0, bytes = 0, errors = 0;
	u32 prod = READ_ONCE(r->prod);
	struct rsim_eth_buf *b;
	u16 flags;

	while (r->cons != prod && rsim_eth_desc_done(r, r->cons)) {
		dma_rmb();
		flags = le16_to_cpu(r->desc[r->cons].flags);
		b = &r->bufs[r->cons];
		dma_unmap_single(dma_dev, b->dma, b->len, DMA_TO_DEVICE);
		if (flags & RSIM_ETH_DESC_ERR) {
			errors++;
		} else {
			packets++;
			bytes += b->len;
		}
		napi_consume_skb(b->skb, 1);
		b->skb = NULL;
		WRITE_ONCE(r->cons, (r->cons + 1) & r->mask);
	}
	u64_stats_update_begin(&priv->syncp);
	priv->tx_packets += packets;
	priv->tx_bytes += bytes;
	priv->tx_errors += errors;
	u64_stats_update_end(&priv->syncp);

	/* Pairs with the barrier in start_xmit after stopping the queue. */
	smp_mb();
	if (netif_queue_stopped(priv->netdev) &&
	    rsim_eth_free_slots(r) >= RSIM_TX_WAKE_THRESHOLD)
		netif_wake_queue(priv->netdev);
}

/*
 * Called from NAPI (softirq) and from ndo_open (process context, bottom
 * halves enabled): the _bh lock keeps the NAPI poll that an event raised
 * right after the RX doorbell from running on this CPU while it holds
 * tx_lock, which would spin on it forever.
 */
static void rsim_eth_arm(struct rsim_netdev_priv *priv)
{
	rsim_rx_doorbell(priv, true);
	spin_lock_bh(&priv->tx_lock);
	rsim_wr32(priv->dev, A_RSIM_ETH_TX_DB,
		  FIELD_PREP(R_RSIM_ETH_TX_DB_PROD_MASK, priv->tx.prod) |
		  R_RSIM_ETH_TX_DB_ARM_MASK);
	spin_unlock_bh(&priv->tx_lock);
}

static bool rsim_eth_pending(struct rsim_netdev_priv *priv)
{
	struct rsim_eth_ring *tx = &priv->tx, *rx = &priv->rx;

	return (tx->cons != READ_ONCE(tx->prod) &&
		rsim_eth_desc_done(tx, tx->cons)) ||
	       (rx->cons != rx->prod && rsim_eth_desc_done(rx, rx->cons));
}

static int rsim_napi_poll(struct napi_struct *napi, int budget)
{
	struct rsim_netdev_priv *priv =
		container_of(napi, struct rsim_netdev_priv, napi);
	int done;

	rsim_tx_clean(priv);
	done = rsim_rx(priv, budget);
	/* No RX buffer posted (no memory): keep polling rather than stall. */
	if (priv->rx.prod == priv->rx.cons)
		return budget;
	if (done < budget && napi_complete_done(napi, done)) {
		if (rsim_dead(priv->dev))
			return done;
		rsim_eth_arm(priv);
		/* Completed before the ring was armed: no event for it. */
		if (rsim_eth_pending(priv))
			napi_schedule(napi);
	}
	return done;
}

static netdev_tx_t rsim_start_xmit(struct sk_buff *skb, struct net_device *nd)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);
	struct rsim_dev *dev = priv->dev;
	struct device *dma_dev = &dev->pdev->dev;
	struct rsim_eth_ring *r = &priv->tx;
	struct rsim_eth_desc *d;
	dma_addr_t dma;
	u32 idx;

	if (rsim_dead(dev) || !priv->running)
		goto drop;
	if (skb_put_padto(skb, ETH_ZLEN))
		goto dropped;
	if (skb_linearize(skb) || skb->len > nd->mtu + VLAN_ETH_HLEN)
		goto drop;
	dma = dma_map_single(dma_dev, skb->data, skb->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dma_dev, dma))
		goto drop;

	spin_lock(&priv->tx_lock);
	if (!rsim_eth_free_slots(r)) {
		spin_unlock(&priv->tx_lock);
		dma_unmap_single(dma_dev, dma, skb->len, DMA_TO_DEVICE);
		netif_stop_queue(nd);
		return NETDEV_TX_BUSY;
	}
	idx = r->prod;
	r->bufs[idx].skb = skb;
	r->bufs[idx].dma = dma;
	r->bufs[idx].len = skb->len;
	d = &r->desc[idx];
	d->addr = cpu_to_le64(dma);
	d->len = cpu_to_le16(skb->len);
	d->reserved = 0;
	d->flags = 0;
	WRITE_ONCE(r->prod, (idx + 1) & r->mask);
	skb_tx_timestamp(skb);
	/* writel orders the descriptor before the doorbell. */
	rsim_wr32(dev, A_RSIM_ETH_TX_DB,
		  FIELD_PREP(R_RSIM_ETH_TX_DB_PROD_MASK, r->prod));
	if (!rsim_eth_free_slots(r)) {
		netif_stop_queue(nd);
		/* Pairs with the barrier in rsim_tx_clean. */
		smp_mb();
		if (rsim_eth_free_slots(r) >= RSIM_TX_WAKE_THRESHOLD)
			netif_start_queue(nd);
	}
	spin_unlock(&priv->tx_lock);
	return NETDEV_TX_OK;

drop:
	dev_kfree_skb_any(skb);
dropped:
	u64_stats_update_begin(&priv->syncp);
	priv->tx_dropped++;
	u64_stats_update_end(&priv->syncp);
	return NETDEV_TX_OK;
}

static void rsim_eth_stop_rings(struct rsim_netdev_priv *priv)
{
	struct rsim_dev *dev = priv->dev;
	int err;

	if (priv->tx.created) {
		err = rsim_cmd_destroy_ethq(dev, RSIM_ETHQ_TX);
		if (err)
			rsim_destroy_refused(dev, "Ethernet ring", RSIM_ETHQ_TX,
					     err);
	}
	if (priv->rx.created) {
		err = rsim_cmd_destroy_ethq(dev, RSIM_ETHQ_RX);
		if (err)
			rsim_destroy_refused(dev, "Ethernet ring", RSIM_ETHQ_RX,
					     err);
	}
	rsim_eth_ring_free(dev, &priv->tx, DMA_TO_DEVICE);
	rsim_eth_ring_free(dev, &priv->rx, DMA_FROM_DEVICE);
}

static int rsim_ndo_open(struct net_device *nd)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);
	struct rsim_dev *dev = priv->dev;
	u32 depth;
	int err;

	if (rsim_dead(dev))
		return -EIO;
	depth = min_t(u32, RSIM_ETH_TX_DEPTH, dev->caps.max_eth_depth);
	err = rsim_eth_ring_alloc(dev, &priv->tx, rounddown_pow_of_two(depth));
	if (err)
		return err;
	depth = min_t(u32, RSIM_ETH_RX_DEPTH, dev->caps.max_eth_depth);
	err = rsim_eth_ring_alloc(dev, &priv->rx, rounddown_pow_of_two(depth));
	if (err)
		goto err_rings;
	if (!rsim_rx_refill(priv, GFP_KERNEL)) {
		err = -ENOMEM;
		goto err_rings;
	}
	err = rsim_cmd_create_ethq(dev, RSIM_ETHQ_TX, dev->eqs[0].eqn,
				   priv->tx.mem.dma, priv->tx.depth);
	if (err) {
		netdev_err(nd, "CREATE_ETHQ TX failed: %d\n", err);
		goto err_rings;
	}
	priv->tx.created = true;
	err = rsim_cmd_create_ethq(dev, RSIM_ETHQ_RX, dev->eqs[0].eqn,
				   priv->rx.mem.dma, priv->rx.depth);
	if (err) {
		netdev_err(nd, "CREATE_ETHQ RX failed: %d\n", err);
		goto err_rings;
	}
	priv->rx.created = true;
	priv->running = true;
	napi_enable(&priv->napi);
	/* Hand the posted RX buffers over, arm both rings. */
	rsim_eth_arm(priv);
	netif_start_queue(nd);
	rsim_port_update(dev);
	return 0;

err_rings:
	rsim_eth_stop_rings(priv);
	return err;
}

static int rsim_ndo_stop(struct net_device *nd)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);

	netif_tx_disable(nd);
	napi_disable(&priv->napi);
	priv->running = false;
	rsim_eth_stop_rings(priv);
	rsim_port_update(priv->dev);
	return 0;
}

static int rsim_change_mtu(struct net_device *nd, int mtu)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);
	int err;

	err = rsim_cmd_set_port(priv->dev, RSIM_SET_PORT_MTU, mtu, NULL);
	if (err)
		return err;
	priv->dev->eth_mtu = mtu;
	nd->mtu = mtu;
	return 0;
}

static int rsim_set_mac(struct net_device *nd, void *p)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);
	struct sockaddr *sa = p;
	int err;

	err = eth_prepare_mac_addr_change(nd, p);
	if (err)
		return err;
	err = rsim_cmd_set_port(priv->dev, RSIM_SET_PORT_MAC, 0, sa->sa_data);
	if (err)
		return err;
	eth_commit_mac_addr_change(nd, p);
	ether_addr_copy(priv->dev->mac, nd->dev_addr);
	return 0;
}

static void rsim_get_stats64(struct net_device *nd,
			     struct rtnl_link_stats64 *s)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&priv->syncp);
		s->rx_packets = priv->rx_packets;
		s->rx_bytes = priv->rx_bytes;
		s->rx_errors = priv->rx_errors;
		s->rx_dropped = priv->rx_dropped;
		s->tx_packets = priv->tx_packets;
		s->tx_bytes = priv->tx_bytes;
		s->tx_errors = priv->tx_errors;
		s->tx_dropped = priv->tx_dropped;
	} while (u64_stats_fetch_retry(&priv->syncp, start));
}

static const struct net_device_ops rsim_netdev_ops = {
	.ndo_open = rsim_ndo_open,
	.ndo_stop = rsim_ndo_stop,
	.ndo_start_xmit = rsim_start_xmit,
	.ndo_change_mtu = rsim_change_mtu,
	.ndo_set_mac_address = rsim_set_mac,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_get_stats64 = rsim_get_stats64,
};

static void rsim_get_drvinfo(struct net_device *nd,
			     struct ethtool_drvinfo *info)
{
	struct rsim_netdev_priv *priv = netdev_priv(nd);

	strscpy(info->driver, DRV_MODULE_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(priv->dev->pdev),
		sizeof(info->bus_info));
	snprintf(info->fw_version, sizeof(info->fw_version), "%u.%u.%u",
		 (u32)(priv->dev->fw_ver >> 32),
		 (u32)(priv->dev->fw_ver >> 16) & 0xffff,
		 (u32)priv->dev->fw_ver & 0xffff);
}

static const struct ethtool_ops rsim_ethtool_ops = {
	.get_drvinfo = rsim_get_drvinfo,
	.get_link = ethtool_op_get_link,
};

int rsim_netdev_create(struct rsim_dev *dev)
{
	struct rsim_netdev_priv *priv;
	struct net_device *nd;
	unsigned long flags;
	int err;

	nd = alloc_etherdev(sizeof(*priv));
	if (!nd)
		return -ENOMEM;
	SET_NETDEV_DEV(nd, &dev->pdev->dev);
	priv = netdev_priv(nd);
	priv->dev = dev;
	priv->netdev = nd;
	spin_lock_init(&priv->tx_lock);
	u64_stats_init(&priv->syncp);
	netif_napi_add(nd, &priv->napi, rsim_napi_poll);
	nd->netdev_ops = &rsim_netdev_ops;
	nd->ethtool_ops = &rsim_ethtool_ops;
	nd->min_mtu = RSIM_MIN_ETH_MTU;
	nd->max_mtu = RSIM_MAX_ETH_MTU;
	nd->mtu = clamp_t(u32, dev->eth_mtu, RSIM_MIN_ETH_MTU,
			  RSIM_MAX_ETH_MTU);
	if (is_valid_ether_addr(dev->mac)) {
		eth_hw_addr_set(nd, dev->mac);
	} else {
		dev_warn(&dev->pdev->dev, "port MAC %pM is not valid\n",
			 dev->mac);
		eth_hw_addr_random(nd);
	}
	netif_carrier_off(nd);
	err = register_netdev(nd);
	if (err) {
		dev_err(&dev->pdev->dev, "register_netdev failed: %d\n", err);
		netif_napi_del(&priv->napi);
		free_netdev(nd);
		return err;
	}
	spin_lock_irqsave(&dev->port_lock, flags);
	WRITE_ONCE(dev->netdev, nd);
	rsim_netdev_link_update(dev);
	spin_unlock_irqrestore(&dev->port_lock, flags);
	return 0;
}

void rsim_netdev_destroy(struct rsim_dev *dev)
{
	struct net_device *nd = dev->netdev;
	struct rsim_netdev_priv *priv;
	unsigned long flags;
	u32 i;

	if (!nd)
		return;
	priv = netdev_priv(nd);
	unregister_netdev(nd);
	spin_lock_irqsave(&dev->port_lock, flags);
	WRITE_ONCE(dev->netdev, NULL);
	spin_unlock_irqrestore(&dev->port_lock, flags);
	/* No EQ handler may still hold the old pointer. */
	for (i = 0; i < dev->num_eqs; i++)
		if (dev->eqs[i].irq_requested)
			synchronize_irq(pci_irq_vector(dev->pdev,
						       dev->eqs[i].vector));
	netif_napi_del(&priv->napi);
	free_netdev(nd);
}

/* ---- Port state: the device's link, the net_device and the IB port ----- */

/*
 * The IB port is ACTIVE when the device reports the link up and the
 * net_device is up (as for Soft-RoCE: the RoCE GIDs live on the netdev).
 */
void rsim_port_update(struct rsim_dev *dev)
{
	struct ib_event ev = {};
	unsigned long flags;
	bool active, changed;

	spin_lock_irqsave(&dev->port_lock, flags);
	rsim_netdev_link_update(dev);
	active = dev->link_up && !rsim_dead(dev) && rsim_netdev_running(dev);
	changed = active != dev->ib_port_active;
	dev->ib_port_active = active;
	spin_unlock_irqrestore(&dev->port_lock, flags);

	if (changed && test_bit(RSIM_FLAG_IB_REGISTERED, &dev->flags)) {
		ev.device = &dev->ibdev;
		ev.element.port_num = 1;
		ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
		ib_dispatch_event(&ev);
	}
}
