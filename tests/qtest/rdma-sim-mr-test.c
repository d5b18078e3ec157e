/*
 * QTest testcase for the rdma-sim RDMA NIC: memory registration, keys,
 * and translation through page lists of levels 0, 1 and 2
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

static void xlate_expect(QSimDev *d, uint32_t key, uint32_t pdn,
                         uint32_t access, uint64_t iova, uint64_t len,
                         uint64_t addr, uint64_t contig)
{
    struct rsim_mr_translate_resp r;

    qsim_assert_sts(qsim_mr_translate(d, key, pdn, access, iova, len, &r),
                    RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(r.addr), ==, addr);
    g_assert_cmphex(le64_to_cpu(r.contig), ==, contig);
    g_assert_cmpuint(r.state, ==, RSIM_MR_STATE_VALID);
}

/* The translation a page list must give for byte off of the MR */
static uint64_t pl_addr(const uint64_t *pages, unsigned shift, uint32_t fbo,
                        uint64_t off)
{
    uint64_t pos = off + fbo;

    return pages[pos >> shift] + (pos & ((1ULL << shift) - 1));
}

static uint64_t pl_contig(unsigned shift, uint32_t fbo, uint64_t off,
                          uint64_t len)
{
    uint64_t pos = off + fbo;

    return MIN(len, (1ULL << shift) - (pos & ((1ULL << shift) - 1)));
}

typedef struct TMr {
    uint32_t key;
    uint32_t pdn;
    uint64_t iova, length;
    const uint64_t *pages;
    unsigned shift;
    uint32_t fbo;
} TMr;

static void mr_check_at(QSimDev *d, const TMr *m, uint64_t off, uint64_t len)
{
    qsim_note("offset 0x%" PRIx64 " length 0x%" PRIx64, off, len);
    xlate_expect(d, m->key, m->pdn, 0, m->iova + off, len,
                 pl_addr(m->pages, m->shift, m->fbo, off),
                 pl_contig(m->shift, m->fbo, off, len));
}

static void test_mr_levels(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_mr_translate_resp r;
    struct rsim_cmd_reg_mr c;
    uint64_t p1[5], p2m[3], list;
    g_autofree uint64_t *p600 = g_new(uint64_t, 600);
    uint32_t pdn = qsim_pd_alloc(d);
    uint32_t rkey;
    TMr m;

    /* level 0: contiguous, any address */
    {
        const uint64_t a = 0x1234560040ULL, iova = 0x7f0000000000ULL;
        uint32_t key;

        qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 10000, RSIM_PBL_LEVEL0, a, 0,
                    0, 0);
        key = qsim_create(d, &c, &rkey);
        g_assert_cmphex(rkey, ==, 0);
        xlate_expect(d, key, pdn, 0, iova, 100, a, 100);
        xlate_expect(d, key, pdn, QSIM_ACC_LW, iova, 10000, a, 10000);
        xlate_expect(d, key, pdn, 0, iova + 5000, 1, a + 5000, 1);
        xlate_expect(d, key, pdn, 0, iova + 9999, 1, a + 9999, 1);
        qsim_assert_sts(qsim_mr_translate(d, key, pdn, 0, iova, 1, &r),
                        RSIM_STS_OK);
        g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL0);
        qsim_xlate_fail(d, key, pdn, 0, iova + 9999, 2, RSIM_STS_RANGE);
        qsim_xlate_fail(d, key, pdn, 0, iova - 1, 1, RSIM_STS_RANGE);
        /* level 0 has no pages: page size and count must be 0 */
        qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 10000, RSIM_PBL_LEVEL0, a, 0,
                    12, 0);
        qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
        qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 10000, RSIM_PBL_LEVEL0, a, 1,
                    0, 0);
        qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    }

    /* level 1, 4 KiB pages in reverse order, fbo 0x234 */
    for (unsigned i = 0; i < 5; i++) {
        p1[i] = 0x100000000ULL + (4 - i) * 0x5000;
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x500000000234ULL, .length = 5 * 4096 - 0x234 - 100,
        .pages = p1, .shift = 12, .fbo = 0x234,
    };
    list = qsim_pbl_build(d, RSIM_PBL_LEVEL1, p1, 5);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW | QSIM_ACC_RR, m.iova, m.length,
                RSIM_PBL_LEVEL1, list, 5, 12, m.fbo);
    m.key = qsim_create(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    mr_check_at(d, &m, 0, 100);
    mr_check_at(d, &m, 0, 10000);                   /* to the page end */
    mr_check_at(d, &m, 6000, 4096);                 /* middle */
    mr_check_at(d, &m, 4096 - 0x234, 5000);         /* page boundary */
    mr_check_at(d, &m, 4096 - 0x234 - 1, 5000);     /* last byte of page 0 */
    mr_check_at(d, &m, m.length - 1, 1);            /* last byte */
    mr_check_at(d, &m, m.length - 4000, 4000);
    qsim_assert_sts(qsim_mr_translate(d, m.key, pdn, QSIM_ACC_RR, m.iova, 1,
                                      &r), RSIM_STS_OK);
    g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL1);
    g_assert_cmpuint(r.page_shift, ==, 12);
    qsim_xlate_fail(d, m.key, pdn, 0, m.iova + m.length - 1, 2, RSIM_STS_RANGE);
    /* the list is read when translating: a new entry is used at once */
    qtest_writeq(d->qts, list + 8, 0x7770000000ULL);
    p1[1] = 0x7770000000ULL;
    mr_check_at(d, &m, 4096 - 0x234 + 17, 3);

    /* level 1 with 2 MiB pages */
    for (unsigned i = 0; i < 3; i++) {
        p2m[i] = 0x4000000000ULL + i * 3 * (2ULL << 20);
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x10000, .length = 3 * (2ULL << 20) - 0x1000,
        .pages = p2m, .shift = 21, .fbo = 0x1000,
    };
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, m.iova, m.length, RSIM_PBL_LEVEL1,
                qsim_pbl_build(d, RSIM_PBL_LEVEL1, p2m, 3), 3, 21, m.fbo);
    m.key = qsim_create(d, &c, NULL);
    mr_check_at(d, &m, 0, m.length);
    mr_check_at(d, &m, (2ULL << 20) - 0x1000, 4096);
    mr_check_at(d, &m, (2ULL << 20) - 0x1001, 4096);
    mr_check_at(d, &m, m.length - 1, 1);
    qsim_assert_sts(qsim_mr_translate(d, m.key, pdn, 0, m.iova, 1, &r),
                    RSIM_STS_OK);
    g_assert_cmpuint(r.page_shift, ==, 21);

    /* level 2: 600 pages in two leaves, a permutation, fbo 0x10 */
    for (unsigned i = 0; i < 600; i++) {
        p600[i] = 0x200000000ULL + ((i * 7) % 600) * 0x1000ULL;
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x1000000000ULL, .length = 600 * 4096 - 0x10 - 5,
        .pages = p600, .shift = 12, .fbo = 0x10,
    };
    qsim_mr_cmd(&c, pdn, QSIM_ACC_ALL, m.iova, m.length, RSIM_PBL_LEVEL2,
                qsim_pbl_build(d, RSIM_PBL_LEVEL2, p600, 600), 600, 12, m.fbo);
    m.key = qsim_create(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    mr_check_at(d, &m, 0, 4096);
    mr_check_at(d, &m, 511 * 4096 - 0x10, 8192);    /* page 511 */
    mr_check_at(d, &m, 512 * 4096 - 0x10 - 1, 2);   /* end of leaf 0 */
    mr_check_at(d, &m, 512 * 4096 - 0x10, 8192);    /* start of leaf 1 */
    mr_check_at(d, &m, 300 * 4096 + 0x77 - 0x10, 77);
    mr_check_at(d, &m, m.length - 1, 1);
    mr_check_at(d, &m, m.length - 4090, 4090);      /* whole last page */
    qsim_assert_sts(qsim_mr_translate(d, m.key, pdn, QSIM_ACC_RA, m.iova, 1,
                                      &r), RSIM_STS_OK);
    g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL2);
    qsim_xlate_fail(d, m.key, pdn, 0, m.iova + m.length, 1, RSIM_STS_RANGE);

    /* the PHYS MR covers guest memory with iova == address */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW | QSIM_ACC_RW, 0, 0, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    m.key = qsim_create(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    xlate_expect(d, m.key, pdn, QSIM_ACC_RW, 0x12345678, 0x1000,
                 0x12345678, 0x1000);
    xlate_expect(d, m.key, pdn, 0, 0, 1ULL << 40, 0, 1ULL << 40);
    qsim_xlate_fail(d, m.key, pdn, 0, 0xffffffffffffff00ULL, 0x200,
                    RSIM_STS_RANGE);
    qsim_xlate_fail(d, m.key, pdn, QSIM_ACC_RR, 0x1000, 1, RSIM_STS_ACCESS);
    qsim_stop(d);
}

static void test_mr_errors(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_reg_mr c;
    struct rsim_cmd_mr_translate tc;
    uint64_t pages[8], list;
    uint32_t pdn = qsim_pd_alloc(d), pdn2 = qsim_pd_alloc(d);
    uint32_t key, key0;
    const uint64_t iova = 0x40000;

    for (unsigned i = 0; i < 8; i++) {
        pages[i] = 0x300000000ULL + i * 0x3000;
    }
    list = qsim_pbl_build(d, RSIM_PBL_LEVEL1, pages, 8);

#define REG_BAD(want)  qsim_cmd_expect(d, &c, (want))
    qsim_mr_cmd(&c, pdn + 7, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_BAD_HANDLE);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.flags = cpu_to_le32(2);
    REG_BAD(RSIM_STS_RESERVED);
    c.flags = cpu_to_le32(0x80000000);
    REG_BAD(RSIM_STS_RESERVED);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.reserved0 = cpu_to_le16(1);
    REG_BAD(RSIM_STS_RESERVED);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.reserved[7] = 1;
    REG_BAD(RSIM_STS_RESERVED);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.reserved[11] = 1;                 /* byte 63, the command's last */
    REG_BAD(RSIM_STS_RESERVED);
    /* access rights */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_RW, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_RA | QSIM_ACC_RR, iova, 4096, 1, list, 8, 12,
                0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, 1u << 6, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW | 0x80000000, iova, 4096, 1, list, 8, 12,
                0);
    REG_BAD(RSIM_STS_INVALID);
    /* length and wrap */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 0, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, (1ULL << 34) + 1, 0, 0x1000, 0, 0,
                0);
    REG_BAD(RSIM_STS_LIMIT);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0xfffffffffffff000ULL, 0x2000, 1, list,
                8, 12, 0);
    REG_BAD(RSIM_STS_RANGE);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 2, 0xffffffffffffffffULL, 1, list, 8, 12,
                0);
    REG_BAD(RSIM_STS_RANGE);
    /* level 0 */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 0, 0x1000, 1, 0, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 0, 0x1000, 0, 0, 1);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 0x2000, 0, 0xfffffffffffff000ULL,
                0, 0, 0);
    REG_BAD(RSIM_STS_RANGE);
    /* levels 1 and 2 */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4 * 4096, 1, list, 3, 12, 0);
    REG_BAD(RSIM_STS_RANGE);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4 * 4096, 1, list, 4, 12, 1);
    REG_BAD(RSIM_STS_RANGE);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8193, 12, 0);
    REG_BAD(RSIM_STS_LIMIT);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 2, list, 8192 * 512 + 1, 12,
                0);
    REG_BAD(RSIM_STS_LIMIT);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 13, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 11, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 31, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 0xff, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list, 8, 12, 4096);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, list + 4, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, 0, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 3, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    /* PHYS takes nothing else */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 1, 0, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 4096, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 0, 1, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 0, 0, 0, 0, 12, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 0, 0, 0x1000, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 0, 0, 0, 0, 0, 64);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
#undef REG_BAD
    /* boundaries that are accepted; the list is not read by REG_MR */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 1ULL << 34, 0, 0x100000, 0, 0, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, QSIM_UNMAPPED, 8192, 12,
                4095);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0xffffffffffffe000ULL, 0x2000, 1, list,
                2, 12, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);

    /* translation errors on a local-write MR over 8 pages */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 8 * 4096, 1, list, 8, 12, 0);
    key = qsim_create(d, &c, NULL);
    xlate_expect(d, key, pdn, QSIM_ACC_LW, iova + 8 * 4096 - 1, 1,
                 pages[7] + 4095, 1);
    qsim_xlate_fail(d, key, pdn, 0, iova - 1, 1, RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, iova - 1, 2, RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, 0, 1, RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, iova + 8 * 4096 - 10, 11, RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, iova + 8 * 4096, 1, RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, iova + 10, 0xfffffffffffffffaULL,
                    RSIM_STS_RANGE);
    qsim_xlate_fail(d, key, pdn, 0, 0xffffffffffffff00ULL, 0x1000,
                    RSIM_STS_RANGE);
    qsim_xlate_fail(d, key ^ 1, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key ^ 0x80, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, 0xffffff00 | (key & 0xff), pdn, 0, iova, 1,
                    RSIM_STS_ACCESS);
    qsim_xlate_fail(d, 0, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn2, 0, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn + 100, 0, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn, QSIM_ACC_RW, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn, QSIM_ACC_RR, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn, QSIM_ACC_RA, iova, 1, RSIM_STS_ACCESS);
    qsim_xlate_fail(d, key, pdn, 1u << 6, iova, 1, RSIM_STS_INVALID);
    QSIM_CMD_INIT(tc, RSIM_CMD_MR_TRANSLATE);
    tc.key = cpu_to_le32(key);
    tc.pdn = cpu_to_le32(pdn);
    tc.iova = cpu_to_le64(iova);
    tc.length = cpu_to_le64(1);
    tc.reserved[31] = 1;
    qsim_cmd_expect(d, &tc, RSIM_STS_RESERVED);
    /* zero-length remote READ/WRITE: no key check (IBTA) */
    {
        struct rsim_mr_translate_resp r;

        qsim_assert_sts(qsim_mr_translate(d, 0x12345678, pdn + 9, QSIM_ACC_RR,
                                          0, 0, &r), RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(r.contig), ==, 0);
        qsim_assert_sts(qsim_mr_translate(d, 0, pdn, QSIM_ACC_RW,
                                          QSIM_UNMAPPED, 0, &r), RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(r.contig), ==, 0);
        qsim_xlate_fail(d, 0x12345678, pdn, 0, 0, 0, RSIM_STS_ACCESS);
        qsim_xlate_fail(d, 0x12345678, pdn, QSIM_ACC_LW, 0, 0, RSIM_STS_ACCESS);
        qsim_xlate_fail(d, 0x12345678, pdn, QSIM_ACC_RA, 0, 0, RSIM_STS_ACCESS);
        qsim_xlate_fail(d, key, pdn, QSIM_ACC_RR, iova, 1, RSIM_STS_ACCESS);
    }
    /* a local-read-only MR refuses local writes */
    key0 = qsim_mr_reg_l0(d, pdn, 0, 0x100000, 4096);
    xlate_expect(d, key0, pdn, 0, 0x100000, 16, 0x100000, 16);
    qsim_xlate_fail(d, key0, pdn, QSIM_ACC_LW, 0x100000, 16, RSIM_STS_ACCESS);

    /* a bad page list entry fails only the accesses that use it */
    qtest_writeq(d->qts, list + 2 * 8, pages[2] | 0x8);
    qsim_xlate_fail(d, key, pdn, 0, iova + 2 * 4096 + 5, 1, RSIM_STS_DMA);
    xlate_expect(d, key, pdn, 0, iova + 4096, 4096, pages[1], 4096);
    xlate_expect(d, key, pdn, 0, iova + 3 * 4096, 1, pages[3], 1);
    qtest_writeq(d->qts, list + 2 * 8, pages[2]);
    xlate_expect(d, key, pdn, 0, iova + 2 * 4096 + 5, 1, pages[2] + 5, 1);
    /* a list outside guest memory */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, iova, 4096, 1, QSIM_UNMAPPED, 1, 12, 0);
    key0 = qsim_create(d, &c, NULL);
    qsim_xlate_fail(d, key0, pdn, 0, iova, 1, RSIM_STS_DMA);
    /* a level 2 root with a missing second leaf */
    {
        g_autofree uint64_t *p = g_new(uint64_t, 600);
        uint64_t root;

        for (unsigned i = 0; i < 600; i++) {
            p[i] = 0x500000000ULL + i * 0x1000ULL;
        }
        root = qsim_pbl_build(d, RSIM_PBL_LEVEL2, p, 600);
        qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 600 * 4096, 2, root, 600, 12, 0);
        key0 = qsim_create(d, &c, NULL);
        xlate_expect(d, key0, pdn, 0, 513 * 4096, 1, p[513], 1);
        qtest_writeq(d->qts, root + 8, 0);
        qsim_xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        qtest_writeq(d->qts, root + 8, QSIM_UNMAPPED);
        qsim_xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        qtest_writeq(d->qts, root + 8, 0x10004);
        qsim_xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        xlate_expect(d, key0, pdn, 0, 511 * 4096, 1, p[511], 1);
    }

    /* deregistered: invalid key */
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_OK);
    {
        struct rsim_mr_translate_resp r;

        qsim_assert_sts(qsim_mr_translate(d, key, pdn, 0, iova, 1, &r),
                        RSIM_STS_ACCESS);
        g_assert_cmpuint(r.state, ==, RSIM_MR_STATE_INVALID);
    }
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_BAD_HANDLE);
    qsim_stop(d);
}

static void test_mr_keys(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-mr=4");
    struct rsim_cmd_alloc_stag sc;
    struct rsim_mr_translate_resp tr;
    struct rsim_cmd_reg_mr c;
    uint32_t pdn = qsim_pd_alloc(d);
    uint64_t pbl = qsim_alloc(d, QSIM_PAGE);
    uint32_t k1, k2, k3, rkey, old, stag;

    /* index 0 is never used; rkey only with remote rights */
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    k1 = qsim_create(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k1), ==, 1);
    g_assert_cmphex(rkey, ==, 0);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_RR, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    k2 = qsim_create(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k2), ==, 2);
    g_assert_cmphex(rkey, ==, k2);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW | QSIM_ACC_RA, 0x1000, 4096, 0, 0x1000, 0,
                0, 0);
    k3 = qsim_create(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k3), ==, 3);
    g_assert_cmphex(rkey, ==, k3);
    /* table full */
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    QSIM_CMD_INIT(sc, RSIM_CMD_ALLOC_STAG);
    sc.pdn = cpu_to_le32(pdn);
    sc.max_pages = cpu_to_le32(16);
    sc.pbl_addr = cpu_to_le64(pbl);
    qsim_cmd_expect(d, &sc, RSIM_STS_NO_RESOURCES);

    /* DEREG_MR needs the exact key */
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, k2 ^ 1, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, k2 & 0xff, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, 4 << 8 | (k2 & 0xff),
                       RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, 0xffffffff, RSIM_STS_BAD_HANDLE);
    /* re-registering an index gives a new variant; the old key is dead */
    old = k2;
    for (unsigned i = 0; i < 20; i++) {
        qsim_handle_expect(d, RSIM_CMD_DEREG_MR, old, RSIM_STS_OK);
        k2 = qsim_create(d, &c, NULL);
        g_assert_cmpuint(RSIM_KEY_INDEX(k2), ==, 2);
        g_assert_cmphex(k2, !=, old);
        qsim_xlate_fail(d, old, pdn, 0, 0x1000, 1, RSIM_STS_ACCESS);
        xlate_expect(d, k2, pdn, 0, 0x1000, 1, 0x1000, 1);
        old = k2;
    }

    /* ALLOC_STAG: a FREE key */
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, k1, RSIM_STS_OK);
    QSIM_CMD_INIT(sc, RSIM_CMD_ALLOC_STAG);
    sc.pdn = cpu_to_le32(pdn);
    sc.pbl_addr = cpu_to_le64(pbl);
    sc.max_pages = 0;
    qsim_cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.max_pages = cpu_to_le32(513);
    qsim_cmd_expect(d, &sc, RSIM_STS_LIMIT);
    sc.max_pages = cpu_to_le32(512);
    sc.pbl_addr = cpu_to_le64(pbl + 4);
    qsim_cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.pbl_addr = 0;
    qsim_cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.pbl_addr = cpu_to_le64(pbl);
    sc.pdn = cpu_to_le32(pdn + 1);
    qsim_cmd_expect(d, &sc, RSIM_STS_BAD_HANDLE);
    sc.pdn = cpu_to_le32(pdn);
    sc.reserved0 = cpu_to_le32(1);
    qsim_cmd_expect(d, &sc, RSIM_STS_RESERVED);
    sc.reserved0 = 0;
    sc.reserved[39] = 1;
    qsim_cmd_expect(d, &sc, RSIM_STS_RESERVED);
    sc.reserved[39] = 0;
    stag = qsim_create(d, &sc, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(stag), ==, 1);
    g_assert_cmphex(rkey, ==, stag);
    g_assert_cmphex(stag, !=, k1);
    qsim_assert_sts(qsim_mr_translate(d, stag, pdn, 0, 0, 1, &tr),
                    RSIM_STS_ACCESS);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_FREE);
    qsim_assert_sts(qsim_mr_translate(d, k3, pdn, 0, 0x1000, 1, &tr),
                    RSIM_STS_OK);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_VALID);
    /* the PD is in use by the stag */
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, stag, RSIM_STS_OK);
    qsim_assert_sts(qsim_mr_translate(d, stag, pdn, 0, 0, 1, &tr),
                    RSIM_STS_ACCESS);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_INVALID);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, k2, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, k3, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_OK);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "mr/levels", test_mr_levels },
    { "mr/errors", test_mr_errors },
    { "mr/keys", test_mr_keys },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
