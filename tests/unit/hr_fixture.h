/*
 * hr_fixture.h — builders for the core's plain pod views, shared by the
 * policy, eligibility and gate tests.
 *
 * hr_pod points at caller-owned containers; these helpers keep the table
 * tests readable (one line per container) without hiding any field a test
 * depends on: everything not named starts from hr_pod_init()'s neutral
 * values, exactly as the dump reader does.
 */
#ifndef HR_TEST_FIXTURE_H
#define HR_TEST_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/gates.h"
#include "core/pod.h"
#include "core/policy.h"

#define GiB INT64_C(1073741824)

/* Initializers for hr_container array elements (plain braces, so they also
 * work in static arrays). A container with only a CPU request is Burstable
 * with no memory settings. */
#define APP(req)                                            \
    {                                                       \
        (req), HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false \
    }
#define SIDECAR(req)                                            \
    {                                                           \
        (req), HR_NONE, HR_NONE, HR_NONE, HR_CTR_SIDECAR, false \
    }
#define INIT(req)                                            \
    {                                                        \
        (req), HR_NONE, HR_NONE, HR_NONE, HR_CTR_INIT, false \
    }
/* cpu request/limit and memory request/limit in full. */
#define CTR(kind, creq, clim, mreq, mlim)             \
    {                                                 \
        (creq), (clim), (mreq), (mlim), (kind), false \
    }

static inline hr_pod mkpod(const hr_container *c, uint32_t n)
{
    hr_pod p = hr_pod_init();
    p.ctr = c;
    p.n_ctr = n;
    return p;
}

#define MKPOD(arr) mkpod((arr), (uint32_t)(sizeof(arr) / sizeof((arr)[0])))

static inline hr_node mknode(int64_t allocatable)
{
    return (hr_node){allocatable, true, false, false, false};
}

#define PLAN_MAX_PODS 256
#define PLAN_MAX_CTRS 1024

typedef struct plan_result {
    hr_node_plan np;
    hr_pod_plan out[PLAN_MAX_PODS];
    int64_t lim[PLAN_MAX_CTRS];
} plan_result;

static inline void run_plan(plan_result *r, const hr_config *c, const hr_node *node,
                            const hr_pod *pods, size_t n)
{
    for (size_t i = 0; i < PLAN_MAX_CTRS; i++)
        r->lim[i] = INT64_C(-777); /* poison: every slot must be written */
    r->np = hr_plan_node(c, node, pods, n, r->out, r->lim);
}

/* Container j of pod i's planned CPU limit. */
#define LIM(r, i, j) ((r)->lim[(r)->out[(i)].ctr_off + (j)])

#endif
