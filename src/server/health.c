/*
 * health.c — readiness checks (see health.h).
 */
#include "server/health.h"

void hr_readiness_init(hr_readiness *r)
{
    atomic_init(&r->n, 0);
}

hr_status hr_readiness_add(hr_readiness *r, const char *name, hr_ready_fn fn, void *ud, hr_err *err)
{
    int n = atomic_load(&r->n);
    if (n >= HR_READY_MAX)
        return hr_err_set(err, HR_E_LIMIT, "readiness: more than %d checks", HR_READY_MAX);
    r->c[n].name = name;
    r->c[n].fn = fn;
    r->c[n].ud = ud;
    atomic_store(&r->n, n + 1);
    return HR_OK;
}

bool hr_readiness_eval(const hr_readiness *r, hr_buf *report)
{
    int n = atomic_load(&((hr_readiness *)r)->n);
    bool all = true;
    for (int i = 0; i < n; i++) {
        bool ok = r->c[i].fn(r->c[i].ud);
        all = all && ok;
        if (report)
            hr_buf_printf(report, "[%s] %s\n", ok ? "+" : "-", r->c[i].name);
    }
    if (report)
        hr_buf_puts(report, all ? "ready\n" : "not ready\n");
    return all;
}

void hr_ready_flag_set(hr_ready_flag *f, bool v)
{
    atomic_store(&f->v, v);
}

bool hr_ready_flag_check(void *ud)
{
    return atomic_load(&((hr_ready_flag *)ud)->v);
}
