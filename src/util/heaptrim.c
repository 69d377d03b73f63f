/*
 * heaptrim.c — malloc_trim after a burst (see heaptrim.h).
 */
#include "util/heaptrim.h"

#include <malloc.h>
#include <stdatomic.h>

static atomic_size_t g_work; /* units ended since the last trim */
static atomic_uint_fast64_t g_trims;

bool hr_heaptrim_after(size_t work)
{
    size_t total = atomic_fetch_add(&g_work, work) + work;
    if (total < HR_HEAPTRIM_WORK)
        return false;
    /* Only the caller that takes the count back to 0 trims. */
    if (!atomic_compare_exchange_strong(&g_work, &total, 0))
        return false;
    (void)malloc_trim(0); /* 1: memory returned, 0: none to return; both fine */
    atomic_fetch_add(&g_trims, 1);
    return true;
}

uint64_t hr_heaptrim_count(void)
{
    return atomic_load(&g_trims);
}
