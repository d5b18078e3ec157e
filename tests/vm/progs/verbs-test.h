/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verbs-test: what its files share (verbs-test.c: the harness and the
 * object, QP and event checks; verbs-mr.c: memory registrations).
 */
#ifndef VERBS_TEST_H
#define VERBS_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct ctx {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	union ibv_gid gid;
	int gid_index;
	const char *mrs_path;
};

/* Checks print "ok: ..." or "FAIL: ..."; die() ends the program. */
void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void expect_errno(int got, int want, const char *what);

/* verbs-mr.c */
void test_mrs(struct ctx *c);

#endif
