/*
 * mpi-check - an MPI job that checks its own results, for the cluster
 * tests (tests/vm/guest/cluster-mpi.sh): every rank on its own guest, the
 * traffic over rdma-sim.
 *
 *   mpi-check check   ring exchange (each rank sends to the next, sizes from
 *                     1 byte to 4 MiB, every byte checked), allreduce of
 *                     known values (sum and max), alltoall (8 bytes and
 *                     64 KiB a block), broadcast of 1 MiB; prints
 *                     "check ok: N ranks" on rank 0
 *   mpi-check sweep   ranks 0 and 1: ping-pong latency and streaming
 *                     bandwidth from 1 byte to 4 MiB (the data of each
 *                     size's last ping-pong and last window checked), the
 *                     other ranks asleep;
 *                     prints a table on rank 0 and "sweep done"
 *
 * A wrong byte or value aborts the job (MPI_Abort, exit status 2) with a
 * line that says where.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <mpi.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MSG         (4u << 20)
#define A2A_BIG         (64u << 10)
#define BCAST_LEN       (1u << 20)
#define REDUCE_COUNT    4096
#define SWEEP_WINDOW    32
#define SWEEP_BYTES     (32u << 20)     /* streamed per message size */
#define SWEEP_BIG       (64u << 10)     /* larger messages: a window of 4 */
/* a window's receives each have their own buffer */
#define SWEEP_RBUF      ((size_t)MAX_MSG * 4 > (size_t)SWEEP_BIG * SWEEP_WINDOW ? \
                         (size_t)MAX_MSG * 4 : (size_t)SWEEP_BIG * SWEEP_WINDOW)

static int rank, nranks;

static void fail(const char *what, size_t at, int64_t got, int64_t want)
{
    fprintf(stderr, "mpi-check: rank %d: %s: byte/element %zu is %" PRId64
            ", not %" PRId64 "\n", rank, what, at, got, want);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The byte at offset i of a message from rank src in round r. */
static uint8_t pattern(int src, unsigned r, size_t i)
{
    return (uint8_t)(src * 31 + r * 7 + i * 13 + (i >> 8));
}

static void fill(uint8_t *buf, size_t len, int src, unsigned r)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = pattern(src, r, i);
    }
}

static void verify(const char *what, const uint8_t *buf, size_t len, int src,
                   unsigned r)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != pattern(src, r, i)) {
            fail(what, i, buf[i], pattern(src, r, i));
        }
    }
}

static void *xmalloc(size_t len)
{
    void *p = malloc(len);

    if (!p) {
        fprintf(stderr, "mpi-check: out of memory (%zu bytes)\n", len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void check_ring(uint8_t *sbuf, uint8_t *rbuf)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    unsigned r = 0;

    for (size_t len = 1; len <= MAX_MSG; len *= 4, r++) {
        fill(sbuf, len, rank, r);
        memset(rbuf, 0, len);
        MPI_Sendrecv(sbuf, (int)len, MPI_BYTE, next, (int)r, rbuf, (int)len,
                     MPI_BYTE, prev, (int)r, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        verify("ring", rbuf, len, prev, r);
    }
    if (rank == 0) {
        printf("ring ok: %u sizes, 1 byte to %u bytes\n", r, MAX_MSG);
    }
}

static void check_allreduce(void)
{
    static int64_t in[REDUCE_COUNT], sum[REDUCE_COUNT], max[REDUCE_COUNT];
    int64_t n = nranks;

    for (int i = 0; i < REDUCE_COUNT; i++) {
        in[i] = (int64_t)rank * 1000003 + i;
    }
    MPI_Allreduce(in, sum, REDUCE_COUNT, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(in, max, REDUCE_COUNT, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < REDUCE_COUNT; i++) {
        int64_t want_sum = 1000003 * n * (n - 1) / 2 + n * i;
        int64_t want_max = (n - 1) * 1000003 + i;

        if (sum[i] != want_sum) {
            fail("allreduce sum", i, sum[i], want_sum);
        }
        if (max[i] != want_max) {
            fail("allreduce max", i, max[i], want_max);
        }
    }
    if (rank == 0) {
        printf("allreduce ok: sum and max of %d int64 on %d ranks\n",
               REDUCE_COUNT, nranks);
    }
}

/* Block j of rank i's send buffer goes to rank j: pattern(i, round j). */
static void check_alltoall(uint8_t *sbuf, uint8_t *rbuf, size_t block)
{
    for (int j = 0; j < nranks; j++) {
        fill(sbuf + j * block, block, rank, (unsigned)j);
    }
    memset(rbuf, 0, block * nranks);
    MPI_Alltoall(sbuf, (int)block, MPI_BYTE, rbuf, (int)block, MPI_BYTE,
                 MPI_COMM_WORLD);
    for (int i = 0; i < nranks; i++) {
        verify("alltoall", rbuf + i * block, block, i, (unsigned)rank);
    }
    if (rank == 0) {
        printf("alltoall ok: %zu bytes a block\n", block);
    }
}

static void check_bcast(uint8_t *buf)
{
    if (rank == 0) {
        fill(buf, BCAST_LEN, 0, 99);
    } else {
        memset(buf, 0, BCAST_LEN);
    }
    MPI_Bcast(buf, BCAST_LEN, MPI_BYTE, 0, MPI_COMM_WORLD);
    verify("bcast", buf, BCAST_LEN, 0, 99);
    if (rank == 0) {
        printf("bcast ok: %u bytes\n", BCAST_LEN);
    }
}

static int clamp(size_t v, int lo, int hi)
{
    return v < (size_t)lo ? lo : v > (size_t)hi ? hi : (int)v;
}

/*
 * A barrier that the ranks with nothing to do wait in asleep: busy-polling
 * ranks on the same host cores would slow the two that are measured.
 */
static void sweep_barrier(void)
{
    MPI_Request req;
    int done = 0;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rank < 2) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
    }
}

static void sweep(uint8_t *sbuf, uint8_t *rbuf)
{
    if (rank == 0) {
        printf("%10s %12s %12s\n", "bytes", "latency_us", "bw_MB/s");
    }
    for (size_t len = 1; len <= MAX_MSG; len *= 4) {
        int window = len > SWEEP_BIG ? 4 : SWEEP_WINDOW;
        int lat_iters = clamp((8u << 20) / len, 4, 200);
        int iters = clamp(SWEEP_BYTES / (len * window), 2, 200);
        double t0, lat = 0, bw = 0;

        fill(sbuf, len, rank, 1);
        memset(rbuf, 0, len * window);
        sweep_barrier();
        if (rank < 2) {
            int peer = 1 - rank;

            /* ping-pong: half the round trip */
            t0 = MPI_Wtime();
            for (int i = 0; i < lat_iters; i++) {
                if (rank == 0) {
                    MPI_Send(sbuf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(rbuf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    MPI_Send(sbuf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                }
            }
            lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * lat_iters);
            verify("sweep ping-pong", rbuf, len, peer, 1);
            memset(rbuf, 0, len);

            /* streaming: windows of non-blocking sends, then one ack */
            t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                MPI_Request req[SWEEP_WINDOW];

                for (int w = 0; w < window; w++) {
                    if (rank == 0) {
                        MPI_Isend(sbuf, (int)len, MPI_BYTE, 1, 2,
                                  MPI_COMM_WORLD, &req[w]);
                    } else {
                        MPI_Irecv(rbuf + w * len, (int)len, MPI_BYTE, 0, 2,
                                  MPI_COMM_WORLD, &req[w]);
                    }
                }
                MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
                if (rank == 0) {
                    MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                } else {
                    MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
                }
            }
            bw = (double)len * window * iters /
                 (MPI_Wtime() - t0) / 1e6;
            for (int w = 0; rank == 1 && w < window; w++) {
                verify("sweep stream", rbuf + w * len, len, 0, 1);
            }
        }
        if (rank == 0) {
            printf("%10zu %12.2f %12.2f\n", len, lat, bw);
        }
    }
    sweep_barrier();
    if (rank == 0) {
        printf("sweep done\n");
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    size_t big = MAX_MSG;
    uint8_t *sbuf, *rbuf;
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Get_processor_name(host, &hlen);
    printf("rank %d of %d on %s\n", rank, nranks, host);
    fflush(stdout);
    if (big < A2A_BIG * (size_t)nranks) {
        big = A2A_BIG * (size_t)nranks;
    }
    sbuf = xmalloc(big);
    rbuf = xmalloc(big > SWEEP_RBUF ? big : SWEEP_RBUF);
    MPI_Barrier(MPI_COMM_WORLD);

    if (!strcmp(mode, "check")) {
        check_ring(sbuf, rbuf);
        check_allreduce();
        check_alltoall(sbuf, rbuf, 8);
        check_alltoall(sbuf, rbuf, A2A_BIG);
        check_bcast(rbuf);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("check ok: %d ranks\n", nranks);
        }
    } else if (!strcmp(mode, "sweep")) {
        if (nranks < 2) {
            fprintf(stderr, "mpi-check: sweep needs 2 ranks or more\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        sweep(sbuf, rbuf);
    } else {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi-check [check|sweep]\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
