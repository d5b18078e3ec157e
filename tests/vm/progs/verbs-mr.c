// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbs-test: memory registrations of several sizes and layouts, the
 * page-list level the driver chose for each (its debugfs "mrs" file), and
 * the errno of bad registrations.
 */
#include "verbs-test.h"

/* ------------------------------------------------------------------------
 * Memory registrations and the expected page-list levels
 * ------------------------------------------------------------------------ */

struct mr_case {
	const char *name;
	void *buf;
	size_t len;
	size_t map_len;		/* munmap length, 0 = free() */
	struct ibv_mr *mr;
	int want_level;		/* -1: no expectation */
};

/* Are the buffer's pages physically contiguous?  -1: cannot tell. */
static int phys_contiguous(void *buf, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)buf & ~(uintptr_t)(psz - 1);
	uintptr_t last = ((uintptr_t)buf + len - 1) & ~(uintptr_t)(psz - 1);
	uint64_t prev = 0, e;
	uintptr_t va;
	int fd, contig = 1;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return -1;
	for (va = first; va <= last; va += psz) {
		if (pread(fd, &e, sizeof(e), (va / psz) * sizeof(e)) !=
		    sizeof(e) || !(e & (1ull << 63)) ||
		    !(e & ((1ull << 55) - 1))) {
			close(fd);
			return -1;	/* not present or PFN hidden */
		}
		e &= (1ull << 55) - 1;
		if (va != first && e != prev + 1)
			contig = 0;
		prev = e;
	}
	close(fd);
	return contig;
}

/*
 * Fault the buffer's pages in, alternating with the pages of a scratch
 * mapping, so that consecutive pages of the buffer do not get consecutive
 * physical pages (in a fresh guest they otherwise often do, and the driver
 * then rightly uses no page list at all).
 */
static void touch_interleaved(void *buf, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *scratch;
	size_t off;

	scratch = mmap(NULL, len + psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED)
		die("mmap scratch: %s", strerror(errno));
	madvise(scratch, len + psz, MADV_NOHUGEPAGE);
	for (off = 0; off < len + psz; off += psz) {
		if (off < len)
			((volatile char *)buf)[off] = 0x5a;
		scratch[off] = 1;
	}
	memset(buf, 0x5a, len);
	munmap(scratch, len + psz);
}

static void reg_case(struct ctx *c, struct mr_case *m, int level_if_not_contig)
{
	if (level_if_not_contig > 0)
		touch_interleaved(m->buf, m->len);
	else
		memset(m->buf, 0x5a, m->len);	/* fault every page in */
	m->mr = ibv_reg_mr(c->pd, m->buf, m->len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!m->mr) {
		fail("ibv_reg_mr %s (%zu bytes): %s", m->name, m->len,
		     strerror(errno));
		return;
	}
	if (level_if_not_contig < 0) {
		m->want_level = 0;
	} else {
		int contig = phys_contiguous(m->buf, m->len);

		m->want_level = contig == 1 ? 0 : level_if_not_contig;
		if (contig == 1)
			printf("note: %s happens to be physically contiguous: level 0 expected\n",
			       m->name);
	}
	ok("ibv_reg_mr %s (%zu bytes at %p): lkey 0x%x rkey 0x%x, expect PBL level %d",
	   m->name, m->len, m->buf, m->mr->lkey, m->mr->rkey, m->want_level);
}

/* Check the driver's view of the MRs: /sys/kernel/debug/rdma_sim/x/mrs */
static void check_debugfs(struct ctx *c, struct mr_case *cases, int n)
{
	char line[512], key[32];
	int i, levels_seen = 0;
	FILE *f;

	f = fopen(c->mrs_path, "r");
	if (!f) {
		fail("cannot read %s: %s (debugfs mounted? driver loaded?)",
		     c->mrs_path, strerror(errno));
		return;
	}
	printf("---- %s ----\n", c->mrs_path);
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	printf("----\n");
	for (i = 0; i < n; i++) {
		struct mr_case *m = &cases[i];
		char want[32];
		bool found = false;

		if (!m->mr)
			continue;
		snprintf(key, sizeof(key), "lkey=0x%08x ", m->mr->lkey);
		snprintf(want, sizeof(want), " level=%d ", m->want_level);
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, key, strlen(key)))
				continue;
			found = true;
			if (!strstr(line, want))
				fail("debugfs: MR %s has not%s: %s", m->name,
				     want, line);
			else if (!strstr(line, "result=ok"))
				fail("debugfs: device translation of MR %s is not ok: %s",
				     m->name, line);
			else {
				ok("debugfs: MR %s level %d, device translation ok",
				   m->name, m->want_level);
				levels_seen |= 1 << m->want_level;
			}
		}
		if (!found)
			fail("debugfs: no line for MR %s (lkey 0x%x)", m->name,
			     m->mr->lkey);
	}
	fclose(f);
	if (levels_seen == 7)
		ok("PBL levels 0, 1 and 2 all used and translated by the device");
	else
		fail("PBL levels used: mask 0x%x, want 0x7 (levels 0, 1, 2)",
		     levels_seen);
}

void test_mrs(struct ctx *c)
{
	struct mr_case cases[4] = {};
	size_t n = 0, i;
	void *p;

	/* One 4 KiB page: one contiguous block -> level 0 */
	cases[n].name = "4KiB-page";
	cases[n].len = 4096;
	if (posix_memalign(&cases[n].buf, 4096, 4096))
		die("posix_memalign");
	reg_case(c, &cases[n++], -1);

	/* 1 MiB from malloc: 257 pages -> level 1 */
	cases[n].name = "1MiB-malloc";
	cases[n].len = 1 << 20;
	cases[n].buf = malloc(cases[n].len);
	if (!cases[n].buf)
		die("malloc");
	reg_case(c, &cases[n++], 1);

	/* 6 MiB of 4 KiB pages (no THP): 1536 pages -> level 2 */
	cases[n].name = "6MiB-4k-pages";
	cases[n].len = 6 << 20;
	cases[n].map_len = cases[n].len;
	p = mmap(NULL, cases[n].len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap 6 MiB");
	madvise(p, cases[n].len, MADV_NOHUGEPAGE);
	cases[n].buf = p;
	reg_case(c, &cases[n++], 2);

	/* A 2 MiB huge page, if the guest has one reserved: level 0 */
	p = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p != MAP_FAILED) {
		cases[n].name = "2MiB-hugepage";
		cases[n].len = 2 << 20;
		cases[n].map_len = cases[n].len;
		cases[n].buf = p;
		reg_case(c, &cases[n++], -1);
	} else {
		printf("note: no 2 MiB huge page available (%s): hugepage MR skipped\n",
		       strerror(errno));
	}

	if (c->mrs_path)
		check_debugfs(c, cases, n);

	for (i = 0; i < n; i++) {
		if (cases[i].mr) {
			int err = ibv_dereg_mr(cases[i].mr);

			expect_errno(err, 0, "ibv_dereg_mr");
		}
		if (cases[i].map_len)
			munmap(cases[i].buf, cases[i].map_len);
		else
			free(cases[i].buf);
	}

	/* Bad access: remote write needs local write */
	p = malloc(8192);
	errno = 0;
	if (ibv_reg_mr(c->pd, p, 8192, IBV_ACCESS_REMOTE_WRITE))
		fail("ibv_reg_mr with REMOTE_WRITE but no LOCAL_WRITE succeeded");
	else
		expect_errno(errno, EINVAL,
			     "ibv_reg_mr REMOTE_WRITE without LOCAL_WRITE");
	errno = 0;
	if (ibv_reg_mr(c->pd, p, 8192, IBV_ACCESS_REMOTE_ATOMIC))
		fail("ibv_reg_mr with REMOTE_ATOMIC but no LOCAL_WRITE succeeded");
	else
		expect_errno(errno, EINVAL,
			     "ibv_reg_mr REMOTE_ATOMIC without LOCAL_WRITE");
	free(p);
}

