/*
 * libqos helpers for the rdma-sim qtests: the machine around the device -
 * migration to a new QEMU, saving, snapshots (see rdma-sim.h)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <glib/gstdio.h>
#include "libqos/libqos.h"
#include "libqos/rdma-sim.h"

/* Limit for a migration to complete (it moves a few MiB at most) */
#define MIGRATE_TIMEOUT_US  (20 * G_USEC_PER_SEC)

/* A migration in progress: not yet completed, not failed or cancelled */
static bool migration_running(const char *status)
{
    static const char *const running[] = {
        "setup", "active", "device", "wait-unplug", "pre-switchover",
    };

    for (size_t i = 0; i < ARRAY_SIZE(running); i++) {
        if (!strcmp(status, running[i])) {
            return true;
        }
    }
    return false;
}

bool qsim_vm_running(QSimDev *d)
{
    QDict *rsp = qtest_qmp(d->qts, "{'execute': 'query-status'}");
    bool running = qdict_get_bool(qdict_get_qdict(rsp, "return"), "running");

    qobject_unref(rsp);
    return running;
}

/* Wait (bounded) until d's outgoing migration ends; its final status */
static char *migration_wait(QSimDev *d)
{
    int64_t deadline = qsim_deadline(MIGRATE_TIMEOUT_US);
    QDict *rsp, *ret;

    for (;;) {
        const char *st;

        rsp = qtest_qmp(d->qts, "{'execute': 'query-migrate'}");
        ret = qdict_get_qdict(rsp, "return");
        g_assert(ret);
        st = qdict_get_str(ret, "status");
        qsim_note("migration status %s", st);
        if (!migration_running(st)) {
            char *final = g_strdup(st);

            if (qdict_haskey(ret, "error-desc")) {
                qsim_note("migration: %s", qdict_get_str(ret, "error-desc"));
            }
            qobject_unref(rsp);
            return final;
        }
        qobject_unref(rsp);
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
}

void qsim_wait_migrated(QSimDev *d)
{
    g_autofree char *st = migration_wait(d);
    QDict *rsp, *ret;

    g_assert_cmpstr(st, ==, "completed");
    rsp = qtest_qmp(d->qts, "{'execute': 'query-status'}");
    ret = qdict_get_qdict(rsp, "return");
    g_assert(ret);
    g_assert_cmpstr(qdict_get_str(ret, "status"), ==, "postmigrate");
    g_assert_false(qdict_get_bool(ret, "running"));
    qobject_unref(rsp);
}

QSimDev *qsim_migrate(QSimDev *src, const char *props)
{
    g_autofree char *dir = g_dir_make_tmp("rdma-sim-mig-XXXXXX", NULL);
    g_autofree char *path = NULL, *uri = NULL;
    QSimDev *dst;
    QOSState *qs;
    QPCIDevice *dev;
    QDict *rsp;
    bool running;

    g_assert(src->machine && src->sock < 0);
    g_assert(dir);
    path = g_build_filename(dir, "mig.sock", NULL);
    uri = g_strdup_printf("unix:%s", path);
    qs = qsim_boot(src->machine, props ?: src->props, src->netdev, src->args,
                   uri);
    dev = qpci_device_find(qs->pcibus, src->dev->devfn);
    g_assert(dev);
    qsim_note("migrating to %s", uri);
    running = qsim_vm_running(src);
    /* moves the guest allocator's lists to qs too */
    migrate(src->qs, qs, uri);
    qsim_wait_migrated(src);
    rsp = qtest_qmp(qs->qts, "{'execute': 'query-status'}");
    /* a stopped machine arrives stopped */
    g_assert_cmpstr(qdict_get_str(qdict_get_qdict(rsp, "return"), "status"),
                    ==, running ? "running" : "paused");
    qobject_unref(rsp);

    /*
     * The driver's view of the device is the same on the destination:
     * copy it all, then put in the handles of the destination's QEMU.
     * The function's MSI-X setup and BAR addresses are src's, and the bus
     * hands out the next BAR where src's would.
     */
    dst = g_new(QSimDev, 1);
    *dst = *src;
    dst->qs = qs;
    dst->qts = qs->qts;
    *dev = *src->dev;
    dev->bus = qs->pcibus;
    dst->dev = dev;
    qs->pcibus->pio_alloc_ptr = src->qs->pcibus->pio_alloc_ptr;
    qs->pcibus->mmio_alloc_ptr = src->qs->pcibus->mmio_alloc_ptr;
    dst->machine = g_strdup(src->machine);
    dst->props = g_strdup(props ?: src->props);
    dst->netdev = g_strdup(src->netdev);
    dst->args = g_strdup(src->args);
    /* the ring page lists moved: src gives up an empty array */
    src->ring_pages = g_ptr_array_new();
    qsim_stop(src);

    g_unlink(path);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
    return dst;
}

void qsim_migrate_refused(QSimDev *src, const char *props)
{
    g_autofree char *dir = g_dir_make_tmp("rdma-sim-mig-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    int64_t deadline = qsim_deadline(MIGRATE_TIMEOUT_US);
    g_autofree char *st = NULL;
    QOSState *qs;

    g_assert(src->machine);
    qs = qsim_boot(src->machine, props, src->netdev, src->args, uri);
    /* the destination gives up on the stream and exits with status 1 */
    qtest_set_expected_status(qs->qts, 1);
    qtest_qmp_assert_success(src->qts, "{'execute': 'migrate', "
                             "'arguments': {'uri': %s}}", uri);
    /*
     * Without a return path the source learns of it only if the
     * destination closed the connection before all was sent.
     */
    st = migration_wait(src);
    while (qtest_probe_child(qs->qts)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    qtest_shutdown(qs);
    if (!strcmp(st, "completed")) {
        qtest_qmp_assert_success(src->qts, "{'execute': 'cont'}");
    } else {
        g_assert_cmpstr(st, ==, "failed");
    }
    g_assert_true(qsim_vm_running(src));
    g_unlink(path);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/*
 * A section of a stream: type byte, be32 section id, then for a full
 * section the idstr (length byte, bytes), be32 instance and version ids,
 * the fields, and the footer (0x7e, be32 section id) that QEMU puts after
 * every section of a pc or q35 machine.
 */
#define STREAM_SECTION_FULL     0x04
#define STREAM_SECTION_FOOTER   0x7e

size_t qsim_stream_section_size(QSimDev *d, const char *idstr)
{
    g_autofree char *dir = g_dir_make_tmp("rdma-sim-mig-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "stream", NULL);
    g_autofree char *uri = g_strdup_printf("exec:cat > %s", path);
    g_autofree char *st = NULL;
    g_autofree uint8_t *buf = NULL;
    size_t len = strlen(idstr), n, at = 0, size = 0;
    bool running = qsim_vm_running(d);

    g_assert(dir && len < 256);
    qtest_qmp_assert_success(d->qts, "{'execute': 'migrate', "
                             "'arguments': {'uri': %s}}", uri);
    st = migration_wait(d);
    g_assert_cmpstr(st, ==, "completed");
    if (running) {
        qtest_qmp_assert_success(d->qts, "{'execute': 'cont'}");
    }
    g_assert_true(g_file_get_contents(path, (char **)&buf, &n, NULL));
    for (size_t i = 6; i + len + 8 <= n; i++) {
        if (buf[i - 6] == STREAM_SECTION_FULL && buf[i - 1] == len &&
            !memcmp(buf + i, idstr, len)) {
            g_assert_cmpuint(at, ==, 0);    /* one section of that name */
            at = i - 6;
        }
    }
    g_assert_cmpuint(at, >, 0);
    /* the footer with its id; the device's fields come before it */
    for (size_t i = at + 6 + len + 8; i + 5 <= n && !size; i++) {
        if (buf[i] == STREAM_SECTION_FOOTER &&
            !memcmp(buf + i + 1, buf + at + 1, 4)) {
            size = i + 5 - at;
        }
    }
    g_assert_cmpuint(size, >, 0);
    g_unlink(path);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
    return size;
}

/* Wait (bounded) for the end of job id, which must have succeeded */
static void job_wait(QSimDev *d, const char *id)
{
    int64_t deadline = qsim_deadline(MIGRATE_TIMEOUT_US);
    bool done = false;

    while (!done) {
        QDict *rsp = qtest_qmp(d->qts, "{'execute': 'query-jobs'}");
        QList *jobs = qdict_get_qlist(rsp, "return");
        QListEntry *e;

        g_assert(jobs);
        QLIST_FOREACH_ENTRY(jobs, e) {
            QDict *job = qobject_to(QDict, qlist_entry_obj(e));

            if (strcmp(qdict_get_str(job, "id"), id) ||
                strcmp(qdict_get_str(job, "status"), "concluded")) {
                continue;
            }
            if (qdict_haskey(job, "error")) {
                g_error("job %s: %s", id, qdict_get_str(job, "error"));
            }
            done = true;
        }
        qobject_unref(rsp);
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        if (!done) {
            g_usleep(1000);
        }
    }
    qtest_qmp_assert_success(d->qts, "{'execute': 'job-dismiss', "
                             "'arguments': {'id': %s}}", id);
}

#define SNAPSHOT_NODE   "rsim-snap"

void qsim_snapshot_disk(QSimDev *d, const char *path)
{
    qtest_qmp_assert_success(d->qts, "{'execute': 'blockdev-create', "
                             "'arguments': {'job-id': 'mkfile', 'options': "
                             "{'driver': 'file', 'filename': %s, "
                             "'size': 0}}}", path);
    job_wait(d, "mkfile");
    qtest_qmp_assert_success(d->qts, "{'execute': 'blockdev-add', "
                             "'arguments': {'driver': 'file', "
                             "'node-name': 'rsim-snap-file', "
                             "'filename': %s}}", path);
    qtest_qmp_assert_success(d->qts, "{'execute': 'blockdev-create', "
                             "'arguments': {'job-id': 'mkqcow2', 'options': "
                             "{'driver': 'qcow2', 'file': 'rsim-snap-file', "
                             "'size': 1048576}}}");
    job_wait(d, "mkqcow2");
    qtest_qmp_assert_success(d->qts, "{'execute': 'blockdev-add', "
                             "'arguments': {'driver': 'qcow2', "
                             "'node-name': %s, "
                             "'file': 'rsim-snap-file'}}", SNAPSHOT_NODE);
}

/* snapshot-save or snapshot-load of tag, VM state and disk on our node */
static void snapshot_job(QSimDev *d, const char *cmd, const char *tag)
{
    qtest_qmp_assert_success(d->qts, "{'execute': %s, 'arguments': "
                             "{'job-id': 'snap', 'tag': %s, 'vmstate': %s, "
                             "'devices': [%s]}}", cmd, tag, SNAPSHOT_NODE,
                             SNAPSHOT_NODE);
    job_wait(d, "snap");
}

void qsim_snapshot_save(QSimDev *d, const char *tag)
{
    snapshot_job(d, "snapshot-save", tag);
}

void qsim_snapshot_load(QSimDev *d, const char *tag)
{
    snapshot_job(d, "snapshot-load", tag);
}
