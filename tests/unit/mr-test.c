/* core: mr.c */
/*
 * Unit tests of the device core's page lists and MR translation
 * (hw/rdma-sim/mr.c), built plain on the unit tests' host (host.c): guest
 * memory is an array, and every page-list entry, key and range may be
 * hostile.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "host.h"

#define MEM_SIZE        (4 * MiB)
#define PAGE            4096ull

/* Guest address of page i of guest memory */
static uint64_t page_addr(unsigned i)
{
    return UNIT_MEM_BASE + i * PAGE;
}

static void put_entry(RdmaSimState *s, uint64_t addr, uint64_t val)
{
    uint64_t le = cpu_to_le64(val);

    memcpy(unit_mem(s, addr, 8), &le, 8);
}

/*
 * A level 1 list at page 0 of n pages that are guest pages 1000 - i, so
 * each is apart from the one before it
 */
static RdmaSimPageList level1(RdmaSimState *s, uint32_t n, uint32_t fbo)
{
    RdmaSimPageList pl = {
        .addr = page_addr(0), .npages = n, .fbo = fbo,
        .level = RSIM_PBL_LEVEL1, .page_shift = 12,
    };

    for (uint32_t i = 0; i < n; i++) {
        put_entry(s, pl.addr + 8 * i, page_addr(1000 - i));
    }
    return pl;
}

/* Page-list headers: what rdma_sim_pl_check() refuses, and why. */
static void test_pl_check(void)
{
    RdmaSimState *s = unit_dev_new(MEM_SIZE);
    RdmaSimPageList l0 = { .addr = page_addr(1), .level = RSIM_PBL_LEVEL0 };
    RdmaSimPageList pl = {
        .addr = page_addr(0), .npages = 4, .level = RSIM_PBL_LEVEL1,
        .page_shift = 12,
    };
    RdmaSimPageList bad;

    g_assert_cmpint(rdma_sim_pl_check(s, &l0, 100), ==, RSIM_STS_OK);
    g_assert_cmpint(rdma_sim_pl_check(s, &l0, 0), ==, RSIM_STS_RANGE);
    bad = l0;
    bad.addr = UINT64_MAX - 10;                 /* wraps */
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_RANGE);
    bad = l0;
    bad.page_shift = 12;                        /* means nothing at level 0 */
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_INVALID);

    g_assert_cmpint(rdma_sim_pl_check(s, &pl, 4 * PAGE), ==, RSIM_STS_OK);
    g_assert_cmpint(rdma_sim_pl_check(s, &pl, 4 * PAGE + 1), ==,
                    RSIM_STS_RANGE);
    pl.fbo = 100;                               /* then 4 pages hold less */
    g_assert_cmpint(rdma_sim_pl_check(s, &pl, 4 * PAGE - 100), ==,
                    RSIM_STS_OK);
    g_assert_cmpint(rdma_sim_pl_check(s, &pl, 4 * PAGE - 99), ==,
                    RSIM_STS_RANGE);
    g_assert_cmpint(rdma_sim_pl_check(s, &pl, RDMA_SIM_MAX_MR_SIZE + 1), ==,
                    RSIM_STS_LIMIT);
    bad = pl;
    bad.fbo = PAGE;
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_INVALID);
    bad = pl;
    bad.page_shift = 13;                        /* 8 KiB: not a page size */
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_INVALID);
    bad = pl;
    bad.addr |= 4;                              /* entries are 8 bytes */
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_INVALID);
    bad = pl;
    bad.level = 3;
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_INVALID);
    bad = pl;
    bad.npages = RDMA_SIM_MAX_PBL_L1 + 1;
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_LIMIT);
    bad.level = RSIM_PBL_LEVEL2;                /* a level 2 list may */
    g_assert_cmpint(rdma_sim_pl_check(s, &bad, 100), ==, RSIM_STS_OK);
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 0);
    unit_dev_free(s);
}

/*
 * Level 1 and 2 lists map offsets to the right page and clip segments at
 * page ends; a level 2 list's leaves are read through its root.
 */
static void test_pl_map(void)
{
    RdmaSimState *s = unit_dev_new(MEM_SIZE);
    RdmaSimPageList pl = level1(s, 8, 100);
    RdmaSimPageList l2 = {
        .addr = page_addr(2), .npages = 600, .level = RSIM_PBL_LEVEL2,
        .page_shift = 12,
    };
    uint64_t pages[3];
    RdmaSimSeg seg;

    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 0, 10000, &seg), ==, RSIM_STS_OK);
    g_assert_cmphex(seg.addr, ==, page_addr(1000) + 100);
    g_assert_cmpuint(seg.len, ==, PAGE - 100);
    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 3 * PAGE, 50, &seg), ==,
                    RSIM_STS_OK);
    g_assert_cmphex(seg.addr, ==, page_addr(997) + 100);
    g_assert_cmpuint(seg.len, ==, 50);

    /* root at page 2: leaves at pages 3 and 4, page i is guest page 10+i */
    put_entry(s, l2.addr, page_addr(3));
    put_entry(s, l2.addr + 8, page_addr(4));
    for (unsigned i = 0; i < 600; i++) {
        put_entry(s, page_addr(3) + 8 * i, page_addr(10 + i));
    }
    g_assert_cmpint(rdma_sim_pl_map(s, &l2, 513 * PAGE + 7, PAGE, &seg), ==,
                    RSIM_STS_OK);
    g_assert_cmphex(seg.addr, ==, page_addr(10 + 513) + 7);
    g_assert_cmpuint(seg.len, ==, PAGE - 7);
    g_assert_cmpint(rdma_sim_pl_pages(s, &l2, 511, 3, pages), ==,
                    RSIM_STS_OK);
    g_assert_cmphex(pages[0], ==, page_addr(10 + 511));
    g_assert_cmphex(pages[2], ==, page_addr(10 + 513));
    g_assert_cmpint(rdma_sim_pl_pages(s, &l2, 599, 2, pages), ==,
                    RSIM_STS_RANGE);
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 0);
    unit_dev_free(s);
}

/*
 * Entries the guest wrote may be anything: a page address off its page
 * alignment, a leaf pointer of 0 or misaligned, a list outside guest
 * memory.  Each is an error status; a stopped device reads
 * nothing at all.
 */
static void test_pl_hostile(void)
{
    RdmaSimState *s = unit_dev_new(MEM_SIZE);
    RdmaSimPageList pl = level1(s, 8, 0);
    RdmaSimPageList l2 = {
        .addr = page_addr(2), .npages = 600, .level = RSIM_PBL_LEVEL2,
        .page_shift = 12,
    };
    RdmaSimSeg seg;

    put_entry(s, pl.addr + 8 * 2, page_addr(5) + 8);
    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 2 * PAGE, 8, &seg), ==,
                    RSIM_STS_DMA);
    /* the last page below 2^64 is a page like any other: it maps */
    put_entry(s, pl.addr + 8 * 3, -PAGE);
    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 3 * PAGE + 8, 16, &seg), ==,
                    RSIM_STS_OK);
    g_assert_cmphex(seg.addr, ==, -PAGE + 8);
    /* the entries around them are still good */
    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 4 * PAGE, 8, &seg), ==,
                    RSIM_STS_OK);
    g_assert_cmphex(seg.addr, ==, page_addr(996));

    put_entry(s, l2.addr, 0);
    g_assert_cmpint(rdma_sim_pl_map(s, &l2, 0, 8, &seg), ==, RSIM_STS_DMA);
    put_entry(s, l2.addr, page_addr(3) + 4);
    g_assert_cmpint(rdma_sim_pl_map(s, &l2, 0, 8, &seg), ==, RSIM_STS_DMA);
    put_entry(s, l2.addr, UNIT_MEM_BASE + MEM_SIZE);    /* past the end */
    g_assert_cmpint(rdma_sim_pl_map(s, &l2, 0, 8, &seg), ==, RSIM_STS_DMA);
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 1);
    l2.addr = 8;                                        /* below memory */
    g_assert_cmpint(rdma_sim_pl_map(s, &l2, 0, 8, &seg), ==, RSIM_STS_DMA);
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 2);

    /* a stopped device's DMA is refused (rdma_sim_dma_refused) */
    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, FATAL, 1);
    g_assert_cmpint(rdma_sim_pl_map(s, &pl, 4 * PAGE, 8, &seg), ==,
                    RSIM_STS_DMA);
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 2);
    unit_dev_free(s);
}

/*
 * MR translation end to end (datasheet section 9): an MR of 8 scattered
 * pages gathers and scatters across them; a wrong key variant, another
 * PD, missing rights and ranges outside the MR (also wrapping at 2^64)
 * are refused before any byte moves.
 */
static void test_mr_dma(void)
{
    const uint32_t key = 3 << 8 | 0x5a, pdn = 1;
    RdmaSimState *s = unit_dev_new(MEM_SIZE);
    RdmaSimMr *mr;
    uint8_t buf[3 * 4096], back[sizeof(buf)];

    s->props.max_mr = 8;
    s->mrs = g_new0(RdmaSimMr, s->props.max_mr);
    mr = &s->mrs[3];
    mr->state = RSIM_MR_STATE_VALID;
    mr->key = key;
    mr->pdn = pdn;
    mr->access = RSIM_ACCESS_LOCAL_WRITE | RSIM_ACCESS_REMOTE_READ;
    mr->iova = 0x7f0000001000ull - 200;
    mr->length = 8 * PAGE - 200;
    mr->pl = level1(s, 8, PAGE - 200);

    for (unsigned i = 0; i < sizeof(buf); i++) {
        buf[i] = i * 13 + 1;
    }
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, RSIM_ACCESS_LOCAL_WRITE,
                                    mr->iova + 100, buf, sizeof(buf),
                                    DMA_DIRECTION_FROM_DEVICE), ==,
                    RSIM_STS_OK);
    /* the first 100 bytes are the end of page 1000, the next page 999 */
    g_assert_cmpmem(unit_mem(s, page_addr(1000) + PAGE - 100, 100), 100,
                    buf, 100);
    g_assert_cmpmem(unit_mem(s, page_addr(999), PAGE), PAGE, buf + 100,
                    PAGE);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, RSIM_ACCESS_REMOTE_READ,
                                    mr->iova + 100, back, sizeof(back),
                                    DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_OK);
    g_assert_cmpmem(back, sizeof(back), buf, sizeof(buf));

    memset(back, 0, sizeof(back));
    g_assert_cmpint(rdma_sim_mr_dma(s, key ^ 1, pdn, 0, mr->iova, back, 8,
                                    DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_ACCESS);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn + 1, 0, mr->iova, back, 8,
                                    DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_ACCESS);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, RSIM_ACCESS_REMOTE_WRITE,
                                    mr->iova, back, 8,
                                    DMA_DIRECTION_FROM_DEVICE), ==,
                    RSIM_STS_ACCESS);
    g_assert_cmpint(rdma_sim_mr_dma(s, 200 << 8 | 0x5a, pdn, 0, mr->iova,
                                    back, 8, DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_ACCESS);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, 0, mr->iova - 1, back, 8,
                                    DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_RANGE);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, 0,
                                    mr->iova + mr->length - 7, back, 8,
                                    DMA_DIRECTION_TO_DEVICE), ==,
                    RSIM_STS_RANGE);
    g_assert_cmpint(rdma_sim_mr_dma(s, key, pdn, 0, mr->iova + 8, back,
                                    UINT64_MAX - 4, DMA_DIRECTION_TO_DEVICE),
                    ==, RSIM_STS_RANGE);
    for (unsigned i = 0; i < sizeof(back); i++) {
        g_assert_cmpuint(back[i], ==, 0);
    }
    g_assert_cmpuint(unit_host(s)->dma_errors, ==, 0);
    g_free(s->mrs);
    unit_dev_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/mr/pl-check", test_pl_check);
    g_test_add_func("/mr/pl-map", test_pl_map);
    g_test_add_func("/mr/pl-hostile", test_pl_hostile);
    g_test_add_func("/mr/dma", test_mr_dma);
    return g_test_run();
}
