/*
 * rdma-sim: the guest error log's rate limit, which every host applies
 * (QEMU's platform.c, rdma-sim-server): a guest that makes errors as fast
 * as it can does not flood the host's log
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "trace.h"

/*
 * May a guest error reach the log now, in second now_sec?  At most
 * RDMA_SIM_LOG_PER_SEC a second do (each still fires its trace event and
 * counts); the rest are counted in log_suppressed.  At the first error of
 * a new second, *suppressed is how many the last one left out (0 if
 * none), for the host to say before the error itself.
 */
static bool rdma_sim_log_allowed(RdmaSimState *s, int64_t now_sec,
                                 uint32_t *suppressed)
{
    *suppressed = 0;
    if (now_sec != s->log_sec) {
        *suppressed = s->log_suppressed;
        s->log_sec = now_sec;
        s->log_count = 0;
        s->log_suppressed = 0;
    }
    if (s->log_count < RDMA_SIM_LOG_PER_SEC) {
        s->log_count++;
        return true;
    }
    s->log_suppressed++;
    s->stats[RSIM_STAT_LOG_SUPPRESSED]++;
    return false;
}

/*
 * A guest error, as every host reports it: counted, traced, and - within
 * the rate limit - the text for the host's guest error log (a line, after
 * one saying how many the last second left out); NULL when the limit
 * holds it back.
 */
char *rdma_sim_guest_error_text(RdmaSimState *s, const char *what,
                                int64_t now_sec, const char *fmt, va_list ap)
{
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    uint32_t suppressed;

    s->stats[RSIM_STAT_GUEST_ERRORS]++;
    trace_rdma_sim_guest_error(what, msg);
    if (!rdma_sim_log_allowed(s, now_sec, &suppressed)) {
        return NULL;
    }
    if (suppressed) {
        return g_strdup_printf("rdma-sim: %u more guest errors not logged "
                               "(see the rdma_sim_guest_error trace "
                               "event)\nrdma-sim: %s: %s\n", suppressed,
                               what, msg);
    }
    return g_strdup_printf("rdma-sim: %s: %s\n", what, msg);
}
