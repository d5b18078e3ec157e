/*
 * rdma-sim: the device's objects and counters as QOM properties
 *
 * The read-only properties port, counters, pds, qps, cqs, srqs, mrs and
 * eqs (introspect.c says what each holds), for QMP's qom-get: each one
 * introspect.c's walk of the device through an emitter that hands every
 * value to QEMU's Visitor.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "device.h"
#include "introspect.h"

/* The emitter: the visitor of one qom-get, and where it reports */
typedef struct RdmaSimQomEmitter {
    RdmaSimEmitter e;
    Visitor *v;
    Error **errp;
} RdmaSimQomEmitter;

static RdmaSimQomEmitter *rdma_sim_qom(RdmaSimEmitter *e)
{
    return container_of(e, RdmaSimQomEmitter, e);
}

static bool rdma_sim_qom_start_struct(RdmaSimEmitter *e, const char *name)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);

    return visit_start_struct(q->v, name, NULL, 0, q->errp);
}

static bool rdma_sim_qom_end_struct(RdmaSimEmitter *e)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);
    bool ok = visit_check_struct(q->v, q->errp);

    visit_end_struct(q->v, NULL);
    return ok;
}

static bool rdma_sim_qom_start_list(RdmaSimEmitter *e, const char *name)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);

    return visit_start_list(q->v, name, NULL, 0, q->errp);
}

static bool rdma_sim_qom_end_list(RdmaSimEmitter *e)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);
    bool ok = visit_check_list(q->v, q->errp);

    visit_end_list(q->v, NULL);
    return ok;
}

/* Output visitors take a pointer to the value */
static bool rdma_sim_qom_u32(RdmaSimEmitter *e, const char *name,
                             uint32_t val)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);

    return visit_type_uint32(q->v, name, &val, q->errp);
}

static bool rdma_sim_qom_u64(RdmaSimEmitter *e, const char *name,
                             uint64_t val)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);

    return visit_type_uint64(q->v, name, &val, q->errp);
}

static bool rdma_sim_qom_bool(RdmaSimEmitter *e, const char *name, bool val)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);

    return visit_type_bool(q->v, name, &val, q->errp);
}

static bool rdma_sim_qom_str(RdmaSimEmitter *e, const char *name,
                             const char *val)
{
    RdmaSimQomEmitter *q = rdma_sim_qom(e);
    char *str = (char *)val;

    return visit_type_str(q->v, name, &str, q->errp);
}

static const RdmaSimEmitOps rdma_sim_qom_ops = {
    .start_struct = rdma_sim_qom_start_struct,
    .end_struct = rdma_sim_qom_end_struct,
    .start_list = rdma_sim_qom_start_list,
    .end_list = rdma_sim_qom_end_list,
    .u32 = rdma_sim_qom_u32,
    .u64 = rdma_sim_qom_u64,
    .boolean = rdma_sim_qom_bool,
    .str = rdma_sim_qom_str,
};

/* opaque: the property's index in introspect.c's table */
static void rdma_sim_qom_get(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    RdmaSimQomEmitter q = { .e.ops = &rdma_sim_qom_ops, .v = v,
                            .errp = errp };

    rdma_sim_introspect(RDMA_SIM(obj), (uintptr_t)opaque, name, &q.e);
}

void rdma_sim_introspect_class_init(ObjectClass *klass)
{
    const char *name, *type, *desc;

    for (uintptr_t i = 0; (name = rdma_sim_introspect_prop(i, &type, &desc));
         i++) {
        object_class_property_add(klass, name, type, rdma_sim_qom_get, NULL,
                                  NULL, (void *)i);
        object_class_property_set_description(klass, name, desc);
    }
}
