/*
 * vpas.c — the VerticalPodAutoscaler store (design §4, foreign-writer):
 * per object only what the decision needs — its target's kind and name,
 * whether its update mode writes, which containers' CPU limits it writes
 * (a default and the exceptions) and its writer name — as interned ids in
 * rows of a small table (store.c writes the put, delete and sweep of rows;
 * the row's payload holds references, given back by hr_cvpas_release).
 *
 * A change marks every node dirty: its pods may sit on any node, and VPAs
 * change rarely. The decision itself is the core's (hr_vpa_writes_pod);
 * this file only finds the pod's namespace's VPAs and asks, for a cached
 * pod and for one not cached yet (the webhook's, at its creation) alike.
 */
#include "cache/vpas.h"

#include <stddef.h>
#include <string.h>

#include "cache/store.h"
#include "core/vpa.h"

_Static_assert(offsetof(cvpa, v) == sizeof(crow), "a row's payload follows its header");
_Static_assert(sizeof(cvpa_spec) == 4 * sizeof(uint32_t), "the payload has no padding");

void hr_cvpas_release(hr_cache *c, const void *payload)
{
    cvpa_spec s;
    memcpy(&s, payload, sizeof s);
    hr_intern_unref(&c->str, s.writer);
    hr_intern_unref(&c->str, s.target_name);
    hr_intern_unref(&c->str, s.exceptions);
}

hr_status hr_cvpas_put(hr_cache *c, const hr_kvpa *v, hr_err *err)
{
    cvpa_spec s = {0};
    s.writer = hr_cstore_intern(c, v->vpa.writer);
    s.target_name = hr_cstore_intern(c, v->vpa.target_name);
    s.exceptions = hr_cstore_intern(c, v->vpa.exceptions);
    if (s.writer == UINT32_MAX || s.target_name == UINT32_MAX || s.exceptions == UINT32_MAX) {
        uint32_t held[] = {s.writer, s.target_name, s.exceptions};
        for (size_t k = 0; k < sizeof held / sizeof held[0]; k++)
            if (held[k] != UINT32_MAX)
                hr_intern_unref(&c->str, held[k]);
        return hr_err_set(err, HR_E_NOMEM, "verticalpodautoscaler %s/%s: out of memory", v->meta.ns,
                          v->meta.name);
    }
    s.target = v->vpa.target;
    s.writes = v->vpa.writes;
    s.dflt_limits = v->vpa.dflt_limits;
    /* hr_crows_put gives the references back when it does not keep them. */
    return hr_crows_put(c, HR_CK_VPA, &v->meta, &s, sizeof s, err);
}

const char *hr_cvpas_writer_of(const hr_cache *c, const char *ns, const hr_vpa_owner *owner,
                               const hr_pod *pod, const char *const *names)
{
    if (c->vpas.n == 0)
        return NULL;
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    for (uint32_t i = 0; id != 0 && i < c->vpas.n; i++) {
        const cvpa *r = (const cvpa *)row_at(&c->vpas, i);
        if (r->h.ns != id)
            continue;
        hr_vpa x = {
            .writer = hr_intern_str(&c->str, r->v.writer),
            .target_name = r->v.target_name ? hr_intern_str(&c->str, r->v.target_name) : "",
            .exceptions = r->v.exceptions ? hr_intern_str(&c->str, r->v.exceptions) : "",
            .target = r->v.target,
            .writes = r->v.writes != 0,
            .dflt_limits = r->v.dflt_limits != 0,
        };
        if (hr_vpa_writes_pod(&x, owner, pod, names))
            return x.writer;
    }
    return NULL;
}

const char *hr_cvpas_writer(const hr_cache *c, const hr_cpod_view *v)
{
    hr_vpa_owner o = {v->owner_kind, v->owner_group, v->owner_name, v->owner_template_hash};
    return hr_cvpas_writer_of(c, v->ns, &o, &v->pod, v->ctr_names);
}
