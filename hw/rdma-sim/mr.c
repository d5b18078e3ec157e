/*
 * rdma-sim: page lists, the MR/stag table and address translation, and
 * the PDs everything is checked against
 *
 * Every access the device makes to guest memory on behalf of an MR goes
 * through rdma_sim_mr_check() + rdma_sim_mr_map(): key, PD, rights and
 * bounds are checked with 64-bit arithmetic that cannot wrap, and page-list
 * entries read from guest memory are validated before use.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "trace.h"

/* Number of pages needed to hold len bytes starting fbo into page 0. */
static uint64_t rdma_sim_pages_needed(uint64_t fbo, uint64_t len,
                                      unsigned page_shift)
{
    uint64_t page_size = 1ull << page_shift;
    uint64_t end = fbo + len;   /* fbo < 2^30 and len < 2^63: no wrap */

    return (end >> page_shift) + ((end & (page_size - 1)) ? 1 : 0);
}

/*
 * Validate a page list that must map length bytes.  The list's contents
 * are checked when they are used.
 */
enum rsim_status rdma_sim_pl_check(RdmaSimState *s, const RdmaSimPageList *pl,
                                   uint64_t length)
{
    if (length > RDMA_SIM_MAX_MR_SIZE) {
        return RSIM_STS_LIMIT;
    }
    switch (pl->level) {
    case RSIM_PBL_LEVEL0:
        /* No list: page size and count mean nothing and must be 0. */
        if (pl->npages || pl->fbo || pl->page_shift) {
            return RSIM_STS_INVALID;
        }
        if (!length || pl->addr + length - 1 < pl->addr) {
            return RSIM_STS_RANGE;
        }
        return RSIM_STS_OK;
    case RSIM_PBL_LEVEL1:
    case RSIM_PBL_LEVEL2:
        break;
    default:
        return RSIM_STS_INVALID;
    }
    if (pl->page_shift < RSIM_MIN_PAGE_SHIFT ||
        pl->page_shift > RSIM_MAX_PAGE_SHIFT ||
        !(RDMA_SIM_PAGE_SIZES & (1u << pl->page_shift))) {
        return RSIM_STS_INVALID;
    }
    if (pl->fbo >= (1ull << pl->page_shift) || (pl->addr & 7) || !pl->addr) {
        return RSIM_STS_INVALID;
    }
    if (pl->level == RSIM_PBL_LEVEL1 && pl->npages > RDMA_SIM_MAX_PBL_L1) {
        return RSIM_STS_LIMIT;
    }
    if (pl->level == RSIM_PBL_LEVEL2 &&
        pl->npages > (uint64_t)RDMA_SIM_MAX_PBL_ROOT * RSIM_PBL_LEAF_ENTRIES) {
        return RSIM_STS_LIMIT;
    }
    if (!length ||
        rdma_sim_pages_needed(pl->fbo, length, pl->page_shift) > pl->npages) {
        return RSIM_STS_RANGE;
    }
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_read_pbl_entry(RdmaSimState *s, uint64_t addr,
                                                uint64_t *val)
{
    uint64_t le;

    if (rdma_sim_dma_read(s, addr, &le, sizeof(le)) != MEMTX_OK) {
        return RSIM_STS_DMA;
    }
    *val = le64_to_cpu(le);
    return RSIM_STS_OK;
}

/*
 * Guest addresses of pages [first, first + n) of a level 1 or 2 list, read
 * a list page at a time (a ring's pages are resolved when it is created).
 */
enum rsim_status rdma_sim_pl_pages(RdmaSimState *s, const RdmaSimPageList *pl,
                                   uint64_t first, uint64_t n, uint64_t *out)
{
    uint64_t le[RSIM_PBL_LEAF_ENTRIES];

    if (first > pl->npages || n > pl->npages - first) {
        return RSIM_STS_RANGE;
    }
    while (n) {
        uint64_t in_leaf = first % RSIM_PBL_LEAF_ENTRIES;
        uint64_t chunk = MIN(n, RSIM_PBL_LEAF_ENTRIES - in_leaf);
        uint64_t list = pl->addr;

        if (pl->level == RSIM_PBL_LEVEL2) {
            enum rsim_status st =
                rdma_sim_read_pbl_entry(s, pl->addr + first /
                                        RSIM_PBL_LEAF_ENTRIES *
                                        RSIM_PBL_ENTRY_SIZE, &list);

            if (st != RSIM_STS_OK) {
                return st;
            }
            if (!list || (list & 7)) {
                trace_rdma_sim_pbl_bad_entry(pl->addr, first, list);
                return RSIM_STS_DMA;
            }
        } else {
            in_leaf = first;
        }
        if (rdma_sim_dma_read(s, list + in_leaf * RSIM_PBL_ENTRY_SIZE, le,
                              chunk * RSIM_PBL_ENTRY_SIZE) != MEMTX_OK) {
            return RSIM_STS_DMA;
        }
        for (uint64_t i = 0; i < chunk; i++) {
            uint64_t entry = le64_to_cpu(le[i]);

            if ((entry & ((1ull << pl->page_shift) - 1)) ||
                entry + (1ull << pl->page_shift) - 1 < entry) {
                trace_rdma_sim_pbl_bad_entry(pl->addr, first + i, entry);
                return RSIM_STS_DMA;
            }
            *out++ = entry;
        }
        first += chunk;
        n -= chunk;
    }
    return RSIM_STS_OK;
}

/* Guest address of page number page of a level 1 or 2 list. */
static enum rsim_status rdma_sim_pl_page(RdmaSimState *s,
                                         const RdmaSimPageList *pl,
                                         uint64_t page, uint64_t *addr)
{
    return rdma_sim_pl_pages(s, pl, page, 1, addr);
}

/*
 * Map [offset, offset + len) of the space a page list describes (offset 0
 * is the byte at fbo in the first page): the first contiguous segment.
 * The caller has checked that the range lies inside the mapped length.
 */
enum rsim_status rdma_sim_pl_map(RdmaSimState *s, const RdmaSimPageList *pl,
                                 uint64_t offset, uint64_t len, RdmaSimSeg *seg)
{
    uint64_t pos, page_size, in_page, page_addr;
    enum rsim_status st;

    if (pl->level == RSIM_PBL_LEVEL0) {
        seg->addr = pl->addr + offset;
        seg->len = len;
        return RSIM_STS_OK;
    }
    page_size = 1ull << pl->page_shift;
    pos = offset + pl->fbo;
    if (pos < offset) {
        return RSIM_STS_RANGE;
    }
    st = rdma_sim_pl_page(s, pl, pos >> pl->page_shift, &page_addr);
    if (st != RSIM_STS_OK) {
        return st;
    }
    in_page = pos & (page_size - 1);
    seg->addr = page_addr + in_page;
    seg->len = MIN(len, page_size - in_page);
    return RSIM_STS_OK;
}

uint32_t rdma_sim_new_key(RdmaSimState *s, uint32_t index, uint32_t old_key)
{
    uint32_t variant = (s->key_seed++ * 0x9du + 0x5bu) & 0xff;

    if ((index << 8 | variant) == old_key) {
        variant = (variant + 1) & 0xff;
    }
    return index << 8 | variant;
}

/*
 * Steps 1-4 of the translation (datasheet section 9): key, PD, rights and
 * bounds.  access holds the RSIM_ACCESS_* rights the operation needs.
 */
enum rsim_status rdma_sim_mr_check(RdmaSimState *s, uint32_t key, uint32_t pdn,
                                   uint32_t access, uint64_t iova, uint64_t len,
                                   RdmaSimMr **mrp)
{
    uint32_t index = RSIM_KEY_INDEX(key);
    RdmaSimMr *mr;
    uint64_t off;

    if (index >= s->props.max_mr) {
        return RSIM_STS_ACCESS;
    }
    mr = &s->mrs[index];
    if (mr->state != RSIM_MR_STATE_VALID || mr->key != key ||
        mr->pdn != pdn || (access & ~mr->access)) {
        trace_rdma_sim_mr_denied(key, pdn, access, mr->state, mr->pdn,
                                 mr->access);
        return RSIM_STS_ACCESS;
    }
    if (!mr->phys) {
        if (iova < mr->iova) {
            return RSIM_STS_RANGE;
        }
        off = iova - mr->iova;
        if (off > mr->length || len > mr->length - off) {
            return RSIM_STS_RANGE;
        }
    } else if (len && iova + len - 1 < iova) {
        return RSIM_STS_RANGE;
    }
    *mrp = mr;
    return RSIM_STS_OK;
}

/* Step 5: the first contiguous segment of a checked access. */
enum rsim_status rdma_sim_mr_map(RdmaSimState *s, const RdmaSimMr *mr,
                                 uint64_t iova, uint64_t len, RdmaSimSeg *seg)
{
    if (mr->phys) {
        seg->addr = iova;
        seg->len = len;
        return RSIM_STS_OK;
    }
    return rdma_sim_pl_map(s, &mr->pl, iova - mr->iova, len, seg);
}

/* Copy between buf and an MR range, with all checks. */
enum rsim_status rdma_sim_mr_dma(RdmaSimState *s, uint32_t key, uint32_t pdn,
                                 uint32_t access, uint64_t iova, void *buf,
                                 uint64_t len, DMADirection dir)
{
    enum rsim_status st;
    RdmaSimMr *mr;
    RdmaSimSeg seg;
    uint8_t *p = buf;

    st = rdma_sim_mr_check(s, key, pdn, access, iova, len, &mr);
    while (st == RSIM_STS_OK && len) {
        st = rdma_sim_mr_map(s, mr, iova, len, &seg);
        if (st != RSIM_STS_OK) {
            break;
        }
        if ((dir == DMA_DIRECTION_TO_DEVICE ?
             rdma_sim_dma_read(s, seg.addr, p, seg.len) :
             rdma_sim_dma_write(s, seg.addr, p, seg.len)) != MEMTX_OK) {
            st = RSIM_STS_DMA;
            break;
        }
        p += seg.len;
        iova += seg.len;
        len -= seg.len;
    }
    return st;
}

/*
 * Fast-registration keys (ALLOC_STAG): a key is FREE until a REG_MR work
 * request makes it VALID, and FREE again after a LOCAL_INV or a
 * SEND_WITH_INV names it.
 */

/* The fast-registration key of PD pdn that key names, or NULL. */
static RdmaSimMr *rdma_sim_stag_lookup(RdmaSimState *s, uint32_t key,
                                       uint32_t pdn)
{
    uint32_t index = RSIM_KEY_INDEX(key);
    RdmaSimMr *mr = index < s->props.max_mr ? &s->mrs[index] : NULL;

    if (!mr || !mr->fast_reg || mr->pdn != pdn) {
        return NULL;
    }
    return mr;
}

/* LOCAL_INV or SEND_WITH_INV: the key must match exactly. */
bool rdma_sim_stag_invalidate(RdmaSimState *s, uint32_t key, uint32_t pdn)
{
    RdmaSimMr *mr = rdma_sim_stag_lookup(s, key, pdn);

    if (!mr || mr->key != key || mr->state == RSIM_MR_STATE_INVALID) {
        return false;
    }
    mr->state = RSIM_MR_STATE_FREE;
    return true;
}

/* REG_MR: make a FREE key VALID with the attributes of the work request. */
bool rdma_sim_stag_register(RdmaSimState *s, uint32_t pdn,
                            const struct rsim_wr_reg *r)
{
    uint32_t key = le32_to_cpu(r->key);
    uint32_t access = le32_to_cpu(r->access);
    uint64_t iova = le64_to_cpu(r->iova);
    uint64_t length = le64_to_cpu(r->length);
    RdmaSimPageList pl = {
        .level = RSIM_PBL_LEVEL1,
        .npages = le32_to_cpu(r->npages),
        .fbo = le32_to_cpu(r->fbo),
        .page_shift = r->page_shift,
    };
    RdmaSimMr *mr = rdma_sim_stag_lookup(s, key, pdn);

    if (!mr) {
        return false;
    }
    pl.addr = mr->fr_list;
    if (mr->state != RSIM_MR_STATE_FREE || pl.npages > mr->max_pages ||
        (access & ~RSIM_ACCESS_SUPPORTED) ||
        ((access & (RSIM_ACCESS_REMOTE_WRITE | RSIM_ACCESS_REMOTE_ATOMIC)) &&
         !(access & RSIM_ACCESS_LOCAL_WRITE)) ||
        (length && iova + length - 1 < iova) ||
        rdma_sim_pl_check(s, &pl, length) != RSIM_STS_OK) {
        return false;
    }
    mr->key = key;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->pl = pl;
    mr->state = RSIM_MR_STATE_VALID;
    trace_rdma_sim_mr_reg(key, mr->pdn, access, iova, length, pl.level,
                          pl.page_shift, pl.npages);
    return true;
}

void rdma_sim_mr_reset(RdmaSimState *s)
{
    memset(s->mrs, 0, sizeof(*s->mrs) * s->props.max_mr);
}

/* A PD: what MRs, QPs, SRQs and AHs are checked against */
bool rdma_sim_pd_valid(RdmaSimState *s, uint32_t pdn)
{
    return pdn < s->props.max_pd && s->pds[pdn].valid;
}
