/*
 * wclass.c — the calling thread's write class and the client's write
 * budget, a limiter per class (wclass.h).
 */
#include "kube/transport/wclass.h"

static _Thread_local hr_kwclass tl_class = HR_KW_DEFAULT;

hr_kwclass hr_kclient_write_class(hr_kwclass k)
{
    hr_kwclass old = tl_class;
    tl_class = k;
    return old;
}

hr_kwclass hr_kclient_write_class_now(void)
{
    return tl_class;
}

int hr_kwbudget_init(hr_kwbudget *b, double qps, int burst, int64_t now_ns)
{
    for (int i = 0; i < HR_KW_COUNT_; i++) {
        int rc = hr_klimiter_init(&b->lim[i], qps, burst, now_ns);
        if (rc != 0) {
            while (i-- > 0)
                hr_klimiter_destroy(&b->lim[i]);
            return rc;
        }
    }
    return 0;
}

void hr_kwbudget_destroy(hr_kwbudget *b)
{
    for (int i = 0; i < HR_KW_COUNT_; i++)
        hr_klimiter_destroy(&b->lim[i]);
}

void hr_kwbudget_set(hr_kwbudget *b, double qps, int burst, int64_t now_ns)
{
    for (int i = 0; i < HR_KW_COUNT_; i++)
        hr_klimiter_set(&b->lim[i], qps, burst, now_ns);
}

hr_klimiter *hr_kwbudget_of(hr_kwbudget *b, hr_kwclass k)
{
    return &b->lim[(unsigned)k < HR_KW_COUNT_ ? k : HR_KW_DEFAULT];
}

hr_klimiter *hr_kwbudget_mine(hr_kwbudget *b)
{
    return hr_kwbudget_of(b, tl_class);
}
