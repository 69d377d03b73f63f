/*
 * test_backoff.c — parked pods stay parked for the period, then come back;
 * forgetting and pruning remove exactly what they should.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "controller/backoff.h"

static void park_expire_forget(void **state)
{
    (void)state;
    hr_backoff *b = NULL;
    hr_err err;
    assert_int_equal(hr_backoff_new(&b, &err), HR_OK);
    const char *why = NULL;
    assert_false(hr_backoff_active(b, "a", "p", 0, &why));
    assert_int_equal(hr_backoff_park(b, "a", "p", 1000, HR_BACKOFF_PERIOD_MS, "quota-denied"),
                     HR_OK);
    assert_true(hr_backoff_active(b, "a", "p", 60999, &why));
    assert_string_equal(why, "quota-denied");
    assert_false(hr_backoff_active(b, "a", "p", 61000, NULL));
    /* a/p is not a/pp nor a-p/… */
    assert_false(hr_backoff_active(b, "a", "pp", 2000, NULL));
    assert_false(hr_backoff_active(b, "a/p", "", 2000, NULL));
    assert_int_equal(hr_backoff_park(b, "b", "q", 1000, 5000, "infeasible"), HR_OK);
    assert_int_equal(hr_backoff_prune(b, 6000), 1);
    assert_false(hr_backoff_active(b, "b", "q", 2000, NULL));
    hr_backoff_forget(b, "a", "p");
    assert_false(hr_backoff_active(b, "a", "p", 2000, NULL));
    for (int i = 0; i < 100; i++) {
        char n[16];
        snprintf(n, sizeof n, "p%d", i);
        assert_int_equal(hr_backoff_park(b, "ns", n, 0, 1000 + i, "invalid"), HR_OK);
    }
    assert_int_equal(hr_backoff_prune(b, 1050), 49); /* until 1051..1099 remain */
    hr_backoff_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(park_expire_forget)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
