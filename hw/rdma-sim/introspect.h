/*
 * rdma-sim: the device's objects and counters read out (introspect.c),
 * through an emitter its host gives
 *
 * introspect.c walks the device's state as a tree of structs, lists and
 * scalar members and hands each to an emitter; the host turns them into
 * what it serves.  QEMU: QOM properties, through a Visitor
 * (introspect-qom.c), for QMP's qom-get.  rdma-sim-server: JSON text
 * (rdma_sim_introspect_json(), the emitter below), for its control socket
 * (server/control.c).  Both give the same JSON for a property.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_INTROSPECT_H
#define HW_RDMA_SIM_INTROSPECT_H

#include "device.h"

/*
 * An emitter: a host's functions in ops, its state in the structure that
 * embeds this one.  name is a struct member's, NULL for a list's element
 * (and at the top, for a host whose tree has no name there).  Each
 * returns false when it failed: introspect.c then stops.
 */
typedef struct RdmaSimEmitter RdmaSimEmitter;
typedef struct RdmaSimEmitOps {
    bool (*start_struct)(RdmaSimEmitter *e, const char *name);
    bool (*end_struct)(RdmaSimEmitter *e);
    bool (*start_list)(RdmaSimEmitter *e, const char *name);
    bool (*end_list)(RdmaSimEmitter *e);
    bool (*u32)(RdmaSimEmitter *e, const char *name, uint32_t val);
    bool (*u64)(RdmaSimEmitter *e, const char *name, uint64_t val);
    bool (*boolean)(RdmaSimEmitter *e, const char *name, bool val);
    bool (*str)(RdmaSimEmitter *e, const char *name, const char *val);
} RdmaSimEmitOps;

struct RdmaSimEmitter {
    const RdmaSimEmitOps *ops;
};

/*
 * The properties: port, counters, pds, qps, cqs, srqs, mrs, eqs.  The
 * i-th's name, with its QOM type name and description if asked (type,
 * desc may be NULL); NULL past the last.
 */
#define RDMA_SIM_INTROSPECT_PROPS 8
const char *rdma_sim_introspect_prop(size_t i, const char **type,
                                     const char **desc);

/* Property i through e, named name at the top: false if e failed */
bool rdma_sim_introspect(RdmaSimState *s, size_t i, const char *name,
                         RdmaSimEmitter *e);

/* The property called prop as JSON text (g_free it); NULL: no such one */
char *rdma_sim_introspect_json(RdmaSimState *s, const char *prop);
/* str as a JSON string, quoted and escaped, at the end of out */
void rdma_sim_json_quote(GString *out, const char *str);

#endif /* HW_RDMA_SIM_INTROSPECT_H */
