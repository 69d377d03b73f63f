/*
 * test_strmap.c — the string map against a brute-force model: random puts,
 * gets and deletes over a small key space, so tombstones and rehashes are
 * exercised many times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/prng.h"
#include "util/strmap.h"

#define KEYS 300

static void against_model(void **state)
{
    (void)state;
    hr_strmap m;
    hr_strmap_init(&m);
    uint64_t model[KEYS];
    bool present[KEYS] = {0};
    hr_prng rng;
    hr_prng_seed(&rng, 88172645463325252ULL);
    char key[32];
    for (int step = 0; step < 200000; step++) {
        uint64_t x = hr_prng_next(&rng);
        int k = (int)(x % KEYS);
        snprintf(key, sizeof key, "ns-%d/pod-%d", k % 7, k);
        switch ((x >> 20) % 3) {
        case 0:
            assert_true(hr_strmap_put(&m, key, x));
            model[k] = x;
            present[k] = true;
            break;
        case 1: {
            uint64_t old = 0;
            bool had = hr_strmap_del(&m, key, &old);
            assert_int_equal(had, present[k]);
            if (had)
                assert_true(old == model[k]);
            present[k] = false;
            break;
        }
        default: {
            uint64_t *v = hr_strmap_get(&m, key);
            assert_int_equal(v != NULL, present[k]);
            if (v != NULL)
                assert_true(*v == model[k]);
        }
        }
    }
    size_t n = 0, it = 0;
    const char *kk;
    while (hr_strmap_next(&m, &it, &kk, NULL))
        n++;
    size_t want = 0;
    for (int k = 0; k < KEYS; k++)
        want += present[k];
    assert_int_equal(n, want);
    assert_int_equal(m.n, want);
    hr_strmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(against_model)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
