// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * atomic-check: RC atomics whose every result is checked, so that an
 * atomic executed twice, or lost, is seen (perftest's ib_atomic_bw checks
 * nothing).  The client keeps a window of atomics in flight on one
 * 64-bit counter and one 64-bit value of the server's memory, in turns:
 *   FETCH_AND_ADD(counter, i + 1)  must return the sum of the adds before
 *   CMP_AND_SWP(value, v(k), v(k + 1))  must return v(k): it succeeds
 * (v() is a fixed sequence), so each executes exactly once, in order.  At
 * the end the server compares both words of its memory with what the
 * client says they must be.  QP numbers, PSNs, GIDs and the buffer's key
 * travel over TCP, as with ibv_rc_pingpong.
 *
 *   atomic-check -d DEV -g GIDX [-p PORT]                    (server)
 *   atomic-check -d DEV -g GIDX [-p PORT] [-n OPS | -D SECONDS] [-r RETRY]
 *                SERVER                                      (client)
 * -n: that many operations (default 20000); -D: as many as fit in SECONDS,
 * whatever the host's speed; -r: the QP's retry_cnt (default 7, which
 * rdma-sim and Soft-RoCE take as "for ever"; 0 to 6 end in
 * RETRY_EXC_ERR when the peer stops answering).
 *
 * Prints "atomic-check: N ops" every 1000 operations and "atomic-check:
 * ok, N ops" at the end; exits 0 only if every result was right.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#define WINDOW		4	/* atomics in flight: the QP's max_rd_atomic */
#define REPORT_EVERY	1000

struct wire_info {		/* big-endian on the TCP connection */
	uint32_t qpn;
	uint32_t psn;
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
	uint8_t gid[16];
};

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t *buf;		/* server: counter, value; client: results */
	int gidx;
	int retry_cnt;
	struct wire_info me, peer;
};

static void die(const char *what)
{
	fprintf(stderr, "atomic-check: %s%s%s\n", what, errno ? ": " : "",
		errno ? strerror(errno) : "");
	exit(1);
}

/* The value the i-th CMP_AND_SWP finds: a fixed, never repeating walk */
static uint64_t chain(uint64_t k)
{
	return 0x9e3779b97f4a7c15ull * (k + 1) ^ (k << 7);
}

static int tcp_connect(const char *server, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	int fd, tries;

	if (getaddrinfo(server, port, &hints, &res))
		die("getaddrinfo of the server");
	/* the server may not listen yet: try for 30 s */
	for (tries = 0; tries < 300; tries++) {
		fd = socket(res->ai_family, res->ai_socktype, 0);
		if (fd < 0)
			die("socket");
		if (!connect(fd, res->ai_addr, res->ai_addrlen)) {
			freeaddrinfo(res);
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	die("no TCP connection to the server in 30 s");
	return -1;
}

static int tcp_accept(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int lfd, fd, one = 1;

	if (getaddrinfo(NULL, port, &hints, &res))
		die("getaddrinfo of the port");
	lfd = socket(res->ai_family, res->ai_socktype, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, res->ai_addr, res->ai_addrlen) || listen(lfd, 1))
		die("bind/listen");
	freeaddrinfo(res);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	return fd;
}

static void xfer(int fd, void *out, void *in, size_t len)
{
	size_t done;
	ssize_t n;

	if (out && write(fd, out, len) != (ssize_t)len)
		die("write to the peer");
	for (done = 0; in && done < len; done += n) {
		n = read(fd, (char *)in + done, len - done);
		if (n < 0)
			die("read from the peer");
		if (!n) {
			errno = 0;
			die("the peer closed the TCP connection");
		}
	}
}

static void setup(struct ctx *c, const char *devname, int server)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = WINDOW, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC,
	};
	union ibv_gid gid;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			break;
	if (!list || !list[i])
		die("no such RDMA device (see ibv_devices)");
	c->dev = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!c->dev)
		die("ibv_open_device");
	c->pd = ibv_alloc_pd(c->dev);
	c->cq = ibv_create_cq(c->dev, 2 * WINDOW, NULL, NULL, 0);
	if (!c->pd || !c->cq)
		die("ibv_alloc_pd/ibv_create_cq");
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &ia);
	if (!c->qp)
		die("ibv_create_qp");
	if (posix_memalign((void **)&c->buf, 4096, 4096))
		die("posix_memalign");
	memset(c->buf, 0, 4096);
	if (server)
		c->buf[1] = chain(0);
	c->mr = ibv_reg_mr(c->pd, c->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr)
		die("ibv_reg_mr");
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp to INIT");
	if (ibv_query_gid(c->dev, 1, c->gidx, &gid))
		die("ibv_query_gid");
	c->me.qpn = htobe32(c->qp->qp_num);
	c->me.psn = htobe32(lrand48() & 0xffffff);
	c->me.addr = htobe64((uintptr_t)c->buf);
	c->me.rkey = htobe32(c->mr->rkey);
	memcpy(c->me.gid, gid.raw, 16);
}

static void connect_qp(struct ctx *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = be32toh(c->peer.qpn),
		.rq_psn = be32toh(c->peer.psn),
		.max_dest_rd_atomic = WINDOW,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .hop_limit = 1, .sgid_index = c->gidx },
		},
	};

	memcpy(a.ah_attr.grh.dgid.raw, c->peer.gid, 16);
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = be32toh(c->me.psn);
	a.timeout = 14;		/* 67 ms */
	a.retry_cnt = c->retry_cnt;	/* 7: for ever (a migration may take seconds) */
	a.rnr_retry = 7;
	a.max_rd_atomic = WINDOW;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("ibv_modify_qp to RTS");
}

/* What the i-th operation must return, and how it changes the words */
struct expect {
	uint64_t sum;		/* the counter before the next FETCH_AND_ADD */
	uint64_t k;		/* CMP_AND_SWPs done */
};

static uint64_t op_result(const struct expect *e, uint64_t i)
{
	return i % 2 ? chain(e->k) : e->sum;
}

static void op_account(struct expect *e, uint64_t i)
{
	if (i % 2)
		e->k++;
	else
		e->sum += i + 1;
}

static void post_op(struct ctx *c, const struct expect *e, uint64_t i)
{
	uint64_t raddr = be64toh(c->peer.addr);
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->buf[i % WINDOW],
		.length = 8,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = i,
		.sg_list = &sge,
		.num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.atomic.rkey = be32toh(c->peer.rkey);
	if (i % 2) {
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = raddr + 8;
		wr.wr.atomic.compare_add = chain(e->k);
		wr.wr.atomic.swap = chain(e->k + 1);
	} else {
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.compare_add = i + 1;
	}
	c->buf[i % WINDOW] = 0xdeadbeefdeadbeefull;
	if (ibv_post_send(c->qp, &wr, &bad))
		die("ibv_post_send");
}

/* Seconds since an arbitrary start that does not jump */
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int run_client(struct ctx *c, uint64_t *opsp, double secs)
{
	double end = now() + secs;
	uint64_t ops = *opsp;
	/* posted: what the posts assumed; checked: what completed */
	struct expect posted = { 0, 0 }, checked = { 0, 0 };
	uint64_t next = 0, done = 0;
	struct ibv_wc wc;
	int n;

	while (done < ops) {
		/* with a duration: post no more once it is over */
		if (secs && next < ops && now() >= end)
			ops = next;
		while (next < ops && next - done < WINDOW) {
			post_op(c, &posted, next);
			op_account(&posted, next);
			next++;
		}
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (!n)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "atomic-check: operation %" PRIu64
				" completed with %s\n", wc.wr_id,
				ibv_wc_status_str(wc.status));
			return 1;
		}
		if (wc.wr_id != done) {
			fprintf(stderr, "atomic-check: completion of operation %"
				PRIu64 " where %" PRIu64 " was next\n",
				(uint64_t)wc.wr_id, done);
			return 1;
		}
		if (c->buf[done % WINDOW] != op_result(&checked, done)) {
			fprintf(stderr, "atomic-check: operation %" PRIu64
				" (%s) returned 0x%" PRIx64 ", not 0x%" PRIx64
				" (executed twice, or one lost?)\n", done,
				done % 2 ? "CMP_AND_SWP" : "FETCH_AND_ADD",
				c->buf[done % WINDOW], op_result(&checked, done));
			return 1;
		}
		op_account(&checked, done);
		if (++done % REPORT_EVERY == 0) {
			printf("atomic-check: %" PRIu64 " ops\n", done);
			fflush(stdout);
		}
	}
	*opsp = ops;
	c->buf[0] = htobe64(ops);
	c->buf[1] = htobe64(checked.sum);
	c->buf[2] = htobe64(chain(checked.k));
	return 0;
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *port = "18700";
	uint64_t ops = 20000, want[3];
	double secs = 0;
	struct ctx c = { .gidx = -1, .retry_cnt = 7 };
	int opt, fd, server, bad;
	char verdict;

	while ((opt = getopt(argc, argv, "d:g:p:n:D:r:")) != -1) {
		switch (opt) {
		case 'd':
			devname = optarg;
			break;
		case 'g':
			c.gidx = atoi(optarg);
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			ops = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			secs = atof(optarg);
			ops = UINT64_MAX;
			break;
		case 'r':
			c.retry_cnt = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (!devname || c.gidx < 0 || optind + 1 < argc || !ops || secs < 0 ||
	    c.retry_cnt < 0 || c.retry_cnt > 7)
		goto usage;
	server = optind == argc;
	srand48(getpid() ^ time(NULL));
	setup(&c, devname, server);
	fd = server ? tcp_accept(port) : tcp_connect(argv[optind], port);
	xfer(fd, &c.me, &c.peer, sizeof(c.me));
	connect_qp(&c);
	/* both QPs are ready before the first atomic */
	xfer(fd, "r", &verdict, 1);

	if (!server) {
		bad = run_client(&c, &ops, secs);
		if (bad)
			return 1;
		xfer(fd, c.buf, NULL, sizeof(want));
		xfer(fd, NULL, &verdict, 1);
		if (verdict != 'y') {
			fprintf(stderr, "atomic-check: the server's words differ from what the results said (see its output)\n");
			return 1;
		}
		printf("atomic-check: ok, %" PRIu64 " ops\n", ops);
		return 0;
	}
	xfer(fd, NULL, want, sizeof(want));
	bad = c.buf[0] != be64toh(want[1]) || c.buf[1] != be64toh(want[2]);
	if (bad)
		fprintf(stderr, "atomic-check: the server's counter is 0x%" PRIx64
			" and value 0x%" PRIx64 "; the client's results say 0x%"
			PRIx64 " and 0x%" PRIx64 "\n", c.buf[0], c.buf[1],
			be64toh(want[1]), be64toh(want[2]));
	else
		printf("atomic-check: ok, %" PRIu64 " ops\n", be64toh(want[0]));
	xfer(fd, bad ? "n" : "y", NULL, 1);
	return bad;

usage:
	fprintf(stderr, "usage: atomic-check -d DEV -g GID_INDEX [-p PORT] [-n OPS | -D SECONDS] [-r RETRY_CNT] [SERVER]\n");
	return 2;
}
