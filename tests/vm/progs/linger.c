// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liblinger.so, preloaded by the lossy VM test: ibv_destroy_qp() waits
 * RSIM_LINGER_MS milliseconds (default 2000) before it destroys a QP.
 *
 * ibv_rc_pingpong ends without a closing handshake.  When the ACK of the
 * client's last SEND is lost, the server has completed everything and
 * destroyed its QP before the client's retransmission arrives, so the
 * client retries for ever (retry_cnt 7 is infinite, as in Soft-RoCE).
 * Applications end with a handshake; this stands in for one, so that a
 * lost last ACK is recovered by retransmission, as it is everywhere else.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*destroy)(struct ibv_qp *);
	const char *ms = getenv("RSIM_LINGER_MS");

	if (!destroy)
		destroy = (int (*)(struct ibv_qp *))dlsym(RTLD_NEXT,
							  "ibv_destroy_qp");
	if (!destroy) {
		fprintf(stderr, "liblinger: ibv_destroy_qp not found: %s\n",
			dlerror());
		abort();
	}
	usleep((useconds_t)(ms ? atoi(ms) : 2000) * 1000);
	return destroy(qp);
}
