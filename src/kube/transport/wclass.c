/*
 * wclass.c — the calling thread's write class (client.h,
 * hr_kclient_write_class): which of the client's limiters its writes take
 * their tokens from.
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
