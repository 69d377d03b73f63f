/*
 * test_hpool.c — the client's idle handles (kube/transport/hpool.h): taken
 * most recent first, shed from the bottom (idle longest), the most recent
 * `keep` kept, a full pool closing what it cannot hold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/transport/hpool.h"

static void stack_order_and_shed(void **state)
{
    (void)state;
    hr_khpool p;
    assert_int_equal(hr_khpool_init(&p), 0);
    CURL *h[5];
    for (int i = 0; i < 5; i++) {
        h[i] = hr_khpool_take(&p); /* empty pool: new handles */
        assert_non_null(h[i]);
    }
    for (int i = 0; i < 5; i++)
        hr_khpool_give(&p, h[i]); /* h[4] given back last */
    assert_int_equal(p.n, 5);
    assert_int_equal(hr_khpool_shed(&p, 2), 3); /* h[0..2] idle longest: closed */
    assert_int_equal(p.n, 2);
    assert_int_equal(hr_khpool_shed(&p, 2), 0); /* nothing more to shed */
    assert_ptr_equal(hr_khpool_take(&p), h[4]); /* most recent first */
    assert_ptr_equal(hr_khpool_take(&p), h[3]);
    hr_khpool_give(&p, h[3]);
    hr_khpool_give(&p, h[4]);
    assert_int_equal(hr_khpool_shed(&p, -1), 2); /* keep < 0: none kept */
    assert_int_equal(p.n, 0);
    hr_khpool_give(&p, NULL); /* nothing to give */
    assert_int_equal(p.n, 0);
    hr_khpool_destroy(&p);
}

static void full_pool_closes_the_extra(void **state)
{
    (void)state;
    hr_khpool p;
    assert_int_equal(hr_khpool_init(&p), 0);
    CURL *h[HR_KHPOOL_MAX + 3];
    for (int i = 0; i < HR_KHPOOL_MAX + 3; i++)
        assert_non_null(h[i] = hr_khpool_take(&p));
    for (int i = 0; i < HR_KHPOOL_MAX + 3; i++)
        hr_khpool_give(&p, h[i]); /* the last three are closed, not pooled */
    assert_int_equal(p.n, HR_KHPOOL_MAX);
    assert_ptr_equal(hr_khpool_take(&p), h[HR_KHPOOL_MAX - 1]);
    hr_khpool_give(&p, h[HR_KHPOOL_MAX - 1]);
    hr_khpool_destroy(&p); /* valgrind/ASan: every handle closed once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stack_order_and_shed),
        cmocka_unit_test(full_pool_closes_the_extra),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
