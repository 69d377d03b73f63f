/*
 * podline.c — the containers and pod-level fields of a pod's canonical line,
 * shared by objdump.c and cachedump.c (podline.h says why).
 */
#include "podline.h"

#include <inttypes.h>
#include <stdio.h>

void podline_print(const hr_pod *q, const char *const *ctr_names)
{
    for (uint32_t i = 0; i < q->n_ctr; i++) {
        const hr_container *c = &q->ctr[i];
        printf(
            " ctr[%s kind=%u req=%" PRId64 "/%" PRId64 " lim=%" PRId64 "/%" PRId64 " restart=%d]",
            ctr_names[i], c->kind, c->cpu_req, c->mem_req, c->cpu_lim, c->mem_lim, c->cpu_restart);
    }
    printf(" overhead=%" PRId64 " podreq=%" PRId64 " podres=%d phase=%u bound=%d mirror=%d "
           "windows=%d optout=%d statusres=%d maxcpu=%" PRId64 " maxcpu_invalid=%d undec=%d "
           "foreign=%s grace=%u ready=%d start=%" PRIu32,
           q->overhead_cpu, q->pod_cpu_req, q->pod_resources, q->phase, q->bound, q->mirror,
           q->windows, q->opted_out, q->status_resources, q->max_cpu, q->max_cpu_invalid,
           q->undecodable, q->foreign_writer ? q->foreign_writer : "-", q->grace_opt, q->ready,
           q->start_s);
}
