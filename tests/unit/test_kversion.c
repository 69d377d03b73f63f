/*
 * test_kversion.c — the supported Kubernetes range (kube/kversion.h, design
 * §12): what `headroom preflight` says of a server from its /version. 1.35 and
 * newer pass (in-place resize GA); 1.33 and 1.34, where pods/resize is served
 * in beta and on by default, are refused like every older version; a /version
 * that cannot be read is neither.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/kversion.h"

static void supported(void **state)
{
    (void)state;
    /* The tested versions (tests/cluster/versions.env: v1.35.4, v1.36.3, v1.37.2). */
    assert_int_equal(hr_kversion_check("1", "35"), HR_KVERSION_SUPPORTED);
    assert_int_equal(hr_kversion_check("1", "36"), HR_KVERSION_SUPPORTED);
    assert_int_equal(hr_kversion_check("1", "37"), HR_KVERSION_SUPPORTED);
    /* Newer ones, and a managed distribution's "35+". */
    assert_int_equal(hr_kversion_check("1", "40"), HR_KVERSION_SUPPORTED);
    assert_int_equal(hr_kversion_check("1", "100"), HR_KVERSION_SUPPORTED);
    assert_int_equal(hr_kversion_check("1", "35+"), HR_KVERSION_SUPPORTED);
    assert_int_equal(hr_kversion_check("2", "0"), HR_KVERSION_SUPPORTED);
}

static void refused(void **state)
{
    (void)state;
    /* pods/resize in beta, on by default: refused all the same. */
    assert_int_equal(hr_kversion_check("1", "34"), HR_KVERSION_UNSUPPORTED);
    assert_int_equal(hr_kversion_check("1", "33"), HR_KVERSION_UNSUPPORTED);
    assert_int_equal(hr_kversion_check("1", "34+"), HR_KVERSION_UNSUPPORTED);
    /* Alpha or absent. */
    assert_int_equal(hr_kversion_check("1", "32"), HR_KVERSION_UNSUPPORTED);
    assert_int_equal(hr_kversion_check("1", "27"), HR_KVERSION_UNSUPPORTED);
    assert_int_equal(hr_kversion_check("1", "0"), HR_KVERSION_UNSUPPORTED);
    assert_int_equal(hr_kversion_check("0", "99"), HR_KVERSION_UNSUPPORTED);
}

static void unreadable(void **state)
{
    (void)state;
    assert_int_equal(hr_kversion_check(NULL, "35"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", NULL), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("", "35"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", ""), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "+"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "35++"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "1.35"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "35a"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("v1", "35"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "-35"), HR_KVERSION_UNREADABLE);
    assert_int_equal(hr_kversion_check("1", "99999999999999999999"), HR_KVERSION_UNREADABLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(supported),
        cmocka_unit_test(refused),
        cmocka_unit_test(unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
