/*
 * test_quantity.c — Kubernetes quantity grammar, millicore/byte rounding and
 * the canonical CPU format (src/core/quantity.h).
 *
 * Every CPU number the controller reads (requests, limits, max-cpu, the
 * config's floor) goes through this parser, and every limit it writes comes
 * out of the formatter, so both must agree with the API server exactly: a
 * wrong rounding direction writes a limit below a request, a lax parser
 * accepts an annotation the API server would reject. Expected values are
 * derived from resource.Quantity's rules (ScaledValue rounds up), not from
 * what the code prints.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/quantity.h"
#include "hr_check.h"
#include "util/prng.h"

static void expect_cpu(const char *s, int64_t want)
{
    int64_t v = -12345;
    hr_qerr e = hr_cpu_parse_milli(s, strlen(s), &v);
    if (e != HR_Q_OK)
        fail_msg("cpu \"%s\": error %d (%s), want %" PRId64 "m", s, (int)e, hr_qerr_str(e), want);
    if (v != want)
        fail_msg("cpu \"%s\": got %" PRId64 "m, want %" PRId64 "m", s, v, want);
}

static void expect_mem(const char *s, int64_t want)
{
    int64_t v = -12345;
    hr_qerr e = hr_mem_parse_bytes(s, strlen(s), &v);
    if (e != HR_Q_OK)
        fail_msg("mem \"%s\": error %d (%s), want %" PRId64, s, (int)e, hr_qerr_str(e), want);
    if (v != want)
        fail_msg("mem \"%s\": got %" PRId64 ", want %" PRId64, s, v, want);
}

/* want == HR_Q_OK means "any error": the header leaves the exact class of
 * some malformed inputs open, but they must never parse. */
static void expect_cpu_err(const char *s, hr_qerr want)
{
    int64_t v = 777;
    hr_qerr e = hr_cpu_parse_milli(s, strlen(s), &v);
    if (e == HR_Q_OK)
        fail_msg("cpu \"%s\": accepted as %" PRId64 "m, want an error", s, v);
    if (want != HR_Q_OK && e != want)
        fail_msg("cpu \"%s\": error %d (%s), want %d (%s)", s, (int)e, hr_qerr_str(e), (int)want,
                 hr_qerr_str(want));
    if (hr_qerr_str(e) == NULL || hr_qerr_str(e)[0] == '\0')
        fail_msg("cpu \"%s\": error %d has no description", s, (int)e);
}

static void expect_mem_err(const char *s, hr_qerr want)
{
    int64_t v = 777;
    hr_qerr e = hr_mem_parse_bytes(s, strlen(s), &v);
    if (e == HR_Q_OK)
        fail_msg("mem \"%s\": accepted as %" PRId64 ", want an error", s, v);
    if (want != HR_Q_OK && e != want)
        fail_msg("mem \"%s\": error %d (%s), want %d (%s)", s, (int)e, hr_qerr_str(e), (int)want,
                 hr_qerr_str(want));
}

static void test_plain_and_decimal(void **state)
{
    (void)state;
    expect_cpu("0", 0);
    expect_cpu("1", 1000);
    expect_cpu("2", 2000);
    expect_cpu("1.5", 1500);
    expect_cpu(".5", 500);
    expect_cpu("5.", 5000);
    expect_cpu("0.25", 250);
    expect_cpu("+1", 1000);
    expect_cpu("+.5", 500);
    expect_cpu("007", 7000);
    expect_cpu("64", 64000);
    /* Leading zeros beyond int64's digits are still a small number. */
    expect_cpu("00000000000000000000000000001", 1000);
}

static void test_milli_rounds_up(void **state)
{
    (void)state;
    expect_cpu("100m", 100);
    expect_cpu("1m", 1);
    expect_cpu("0m", 0);
    expect_cpu("0.1m", 1);      /* 0.1 millicore: ceil -> 1 */
    expect_cpu("1.0001", 1001); /* 1000.1 millicores -> 1001 */
    expect_cpu("0.0001", 1);
    expect_cpu("1500.5m", 1501);
    expect_cpu("0.001", 1);
    expect_cpu("0.0010", 1);
    expect_cpu("0.002", 2);
    expect_cpu("0.0011", 2);
    /* Precision far past int64's digits must still round up, not truncate. */
    expect_cpu("1.00000000000000000000000000001", 1001);
    expect_cpu("0.00000000000000000000000000001", 1);
    expect_cpu("2.000000000000000000000000", 2000);
    /* More significant digits than any fixed-width mantissa holds (44
     * here): the lost tail must still round up. */
    expect_cpu("1.0000000000000000000000000000000000000000001", 1001);
    expect_cpu("0.9999999999999999999999999999999999999999999", 1000);
    expect_cpu("0.0009999999999999999999999999999999999999999999", 1);
    expect_cpu("1000000000000000000000000000000000000000001e-42", 1001); /* (10^42 + 1) e-42 */
    expect_mem("1.00000000000000000000000001Ki", 1025);                  /* 1024 + 1e-23 */
    expect_mem("1.00000000000000000000000000Ki", 1024);
    expect_mem("1.0000000000000000000000000000000000000000001Ki", 1025);
    expect_mem("0.00000000000000000000000000000000000000000001Ki", 1);
}

static void test_decimal_si(void **state)
{
    (void)state;
    expect_cpu("1k", 1000000);
    expect_cpu("1M", INT64_C(1000000000));
    expect_cpu("1G", INT64_C(1000000000000));
    expect_cpu("1T", INT64_C(1000000000000000));
    expect_cpu("1P", INT64_C(1000000000000000000));
    expect_cpu("0.5k", 500000);
    expect_cpu("1.5m", 2); /* 1.5 millicores rounds up */
    /* nano and micro: valid Kubernetes syntax, rounded up to a millicore */
    expect_cpu("100u", 1);
    expect_cpu("1000u", 1);
    expect_cpu("1001u", 2);
    expect_cpu("250000u", 250);
    expect_cpu("1500000n", 2);
    expect_cpu("1000000000n", 1000);
    expect_cpu("1n", 1);
    expect_cpu("0n", 0);

    expect_mem("1k", 1000);
    expect_mem("1M", 1000000);
    expect_mem("1G", INT64_C(1000000000));
    expect_mem("1T", INT64_C(1000000000000));
    expect_mem("1P", INT64_C(1000000000000000));
    expect_mem("1E", INT64_C(1000000000000000000)); /* exa, not an exponent */
    expect_mem("9E", INT64_C(9000000000000000000));
    expect_mem("1m", 1); /* a thousandth of a byte rounds up to one */
    expect_mem("1500m", 2);
    expect_mem("1000m", 1);
}

static void test_binary_si(void **state)
{
    (void)state;
    expect_cpu("1Ki", 1024000);
    expect_cpu("0.5Ki", 512000);
    expect_mem("1Ki", 1024);
    expect_mem("1Mi", 1048576);
    expect_mem("1Gi", INT64_C(1073741824));
    expect_mem("1Ti", INT64_C(1099511627776));
    expect_mem("1Pi", INT64_C(1125899906842624));
    expect_mem("1Ei", INT64_C(1152921504606846976));
    expect_mem("7Ei", INT64_C(8070450532247928832));
    expect_mem("1.5Gi", INT64_C(1610612736));
    expect_mem("0.5Ki", 512);
    expect_mem("0.1Ki", 103); /* 102.4 -> 103 */
    expect_mem("128Mi", INT64_C(134217728));
}

static void test_exponent(void **state)
{
    (void)state;
    expect_cpu("1e3", 1000000);
    expect_cpu("1E3", 1000000);
    expect_cpu("1e+3", 1000000);
    expect_cpu("1e0", 1000);
    expect_cpu("1e-3", 1);
    expect_cpu("1e-4", 1); /* 0.1 millicore rounds up */
    expect_cpu("15e-1", 1500);
    expect_cpu("1.5e2", 150000);
    expect_cpu("5.e1", 50000);
    expect_cpu(".5e1", 5000);
    expect_cpu("1e-9", 1);
    expect_mem("1e6", 1000000);
    expect_mem("2E-1", 1);
    /* Signs, exponents on fractions, and the forms the API
     * server stores ("10e15", "9300e12", "1e-3") */
    expect_cpu("5e-1", 500);
    expect_cpu("+5e-1", 500);
    expect_cpu("2.5e-1", 250);
    expect_cpu("1.5E-3", 2); /* 1.5 millicores rounds up */
    expect_cpu("5e-4", 1);
    expect_cpu("1E+3", 1000000);
    expect_cpu("1e-3", 1);
    expect_cpu("+.5e1", 5000);
    expect_cpu("0.0e9", 0);
    expect_cpu("9223372036854775e0", INT64_C(9223372036854775000));
    expect_cpu("9223e12", INT64_C(9223000000000000000));
    expect_cpu_err("9300e12", HR_Q_RANGE); /* what the API server stores for 9.3e15 */
    expect_cpu_err("10e15", HR_Q_RANGE);   /* ... and for 1e16 */
    expect_cpu_err("1e-3m", HR_Q_SUFFIX);  /* an exponent takes no suffix */
    expect_cpu_err("1E3m", HR_Q_SUFFIX);
    expect_cpu_err("1e3Mi", HR_Q_SUFFIX);
}

static void test_sign_and_suffix_combinations(void **state)
{
    (void)state;
    /* + is allowed before any form, and every suffix after a fraction */
    expect_cpu("+100u", 1);
    expect_cpu("+1500000n", 2);
    expect_cpu("+0.1n", 1);
    expect_cpu("+1.5k", 1500000);
    expect_cpu("+1Ki", 1024000);
    expect_cpu(".5m", 1);
    expect_cpu("0.5u", 1);
    expect_cpu("999999n", 1);
    expect_cpu("1000001n", 2);
    expect_cpu("2000000n", 2);
    expect_mem("+1.5Gi", INT64_C(1610612736));
    expect_mem("100u", 1);
    expect_mem("1500000000n", 2);
    expect_mem("+1e3", 1000);
    expect_cpu_err("++1", HR_Q_SYNTAX);
    expect_cpu_err("+u", HR_Q_SYNTAX);
    expect_cpu_err("1nm", HR_Q_SUFFIX);
    expect_cpu_err("1un", HR_Q_SUFFIX);
    expect_cpu_err("1Ni", HR_Q_SUFFIX);
    expect_cpu_err("1ui", HR_Q_SUFFIX);
    expect_cpu_err("-100u", HR_Q_NEGATIVE);
}

/* Binary suffixes on 20+ significant digits: exact ceilings, computed with
 * Python's Decimal (the parser once dropped digits before the shift and
 * came out one unit low). */
static void test_binary_suffix_long_mantissa(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(hr_mem_parse_bytes("2511771992.0359760767Gi", 23, &v), HR_Q_OK);
    CHECK_I64("2511771992.0359760767Gi bytes", v, 2696994640200822427LL);
    assert_int_equal(hr_cpu_parse_milli("7.53236771956514665487Pi", 24, &v), HR_Q_OK);
    CHECK_I64("7.53236771956514665487Pi millicores", v, 8480692113762786797LL);
    assert_int_equal(hr_cpu_parse_milli("2091691840.0692996493Mi", 23, &v), HR_Q_OK);
    CHECK_I64("2091691840.0692996493Mi millicores", v, 2193297862892505950LL);
}

static void test_general_parse_scale_and_sign(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(hr_quantity_parse("1500m", 5, -3, &v), HR_Q_OK);
    CHECK_I64("1500m at scale -3", v, 1500);
    assert_int_equal(hr_quantity_parse("1500m", 5, 0, &v), HR_Q_OK);
    CHECK_I64("1500m at scale 0 (rounds up)", v, 2);
    assert_int_equal(hr_quantity_parse("-1", 2, 0, &v), HR_Q_OK);
    CHECK_I64("-1 at scale 0", v, -1);
    assert_int_equal(hr_quantity_parse("-1.5", 4, -3, &v), HR_Q_OK);
    CHECK_I64("-1.5 at scale -3", v, -1500);
    assert_int_equal(hr_quantity_parse("2k", 2, 3, &v), HR_Q_OK);
    CHECK_I64("2k at scale 3", v, 2);
}

static void test_length_is_respected(void **state)
{
    (void)state;
    /* Quantities are parsed in place inside JSON: bytes after len are not
     * part of the value. */
    int64_t v = 0;
    const char *s = "1500mXYZ";
    assert_int_equal(hr_cpu_parse_milli(s, 5, &v), HR_Q_OK);
    CHECK_I64("\"1500m\" out of \"1500mXYZ\"", v, 1500);
    assert_int_equal(hr_cpu_parse_milli("250\"", 3, &v), HR_Q_OK);
    CHECK_I64("\"250\" before a quote", v, 250000);
    assert_int_equal(hr_cpu_parse_milli("1Ki", 1, &v), HR_Q_OK);
    CHECK_I64("\"1\" out of \"1Ki\"", v, 1000);
    /* And a prefix that stops mid-suffix is itself the thing parsed. */
    assert_int_not_equal(hr_mem_parse_bytes("1Ki", 2, &v), HR_Q_OK);
    assert_int_equal(hr_cpu_parse_milli("", 0, &v), HR_Q_EMPTY);
    assert_int_equal(hr_cpu_parse_milli("5", 0, &v), HR_Q_EMPTY);
}

static void test_rejections(void **state)
{
    (void)state;
    expect_cpu_err("", HR_Q_EMPTY);
    expect_mem_err("", HR_Q_EMPTY);
    expect_cpu_err("m", HR_Q_SYNTAX);
    expect_cpu_err("Ki", HR_Q_SYNTAX);
    expect_cpu_err(".", HR_Q_SYNTAX);
    expect_cpu_err("+", HR_Q_SYNTAX);
    expect_cpu_err("-", HR_Q_OK);
    expect_cpu_err(" 1", HR_Q_SYNTAX);
    expect_cpu_err("--1", HR_Q_SYNTAX);
    expect_cpu_err("+-1", HR_Q_SYNTAX);
    expect_cpu_err("e3", HR_Q_SYNTAX);
    expect_cpu_err(".e3", HR_Q_SYNTAX);
    expect_cpu_err("1x", HR_Q_SUFFIX);
    expect_cpu_err("1KiB", HR_Q_SUFFIX);
    expect_cpu_err("1e", HR_Q_SUFFIX);
    expect_cpu_err("1ee3", HR_Q_SUFFIX);
    expect_cpu_err("1e+", HR_Q_SUFFIX);
    expect_cpu_err("1e3m", HR_Q_SUFFIX);
    expect_cpu_err("1mm", HR_Q_SUFFIX);
    expect_cpu_err("1K", HR_Q_SUFFIX); /* kilo is lower-case k */
    expect_cpu_err("1ki", HR_Q_SUFFIX);
    expect_cpu_err("1Mib", HR_Q_SUFFIX);
    expect_cpu_err("1i", HR_Q_SUFFIX);
    expect_cpu_err("1.2.3", HR_Q_OK);
    expect_cpu_err("1 ", HR_Q_OK);
    expect_cpu_err("1\n", HR_Q_OK);
    expect_cpu_err("1,5", HR_Q_OK);
    expect_cpu_err("0x10", HR_Q_OK);
    expect_cpu_err("1e1.5", HR_Q_OK);
    expect_cpu_err("Infinity", HR_Q_OK);
    expect_cpu_err("NaN", HR_Q_OK);
    expect_mem_err("1KiB", HR_Q_SUFFIX);
    expect_mem_err("1x", HR_Q_SUFFIX);

    /* An embedded NUL inside len is not the end of the string. */
    int64_t v;
    assert_int_not_equal(hr_cpu_parse_milli("1\0"
                                            "5",
                                            3, &v),
                         HR_Q_OK);
}

static void test_range(void **state)
{
    (void)state;
    expect_cpu_err("1e99999999999999", HR_Q_RANGE);
    expect_cpu_err("1e9999999999999999999999999", HR_Q_RANGE);
    expect_cpu_err("99999999999999999999", HR_Q_RANGE);
    expect_cpu_err("1E", HR_Q_RANGE);                   /* 10^18 cores = 10^21 millicores */
    expect_cpu_err("10P", HR_Q_RANGE);                  /* 10^19 millicores */
    expect_cpu_err("9223372036854775.808", HR_Q_RANGE); /* INT64_MAX + 1 milli */
    expect_cpu("9223372036854775.807", INT64_MAX);
    expect_cpu("9223372036854775807m", INT64_MAX);
    expect_cpu_err("9223372036854775808m", HR_Q_RANGE);
    /* Rounding up past INT64_MAX is out of range too, not a wrap. */
    expect_cpu_err("9223372036854775807.1m", HR_Q_RANGE);
    expect_mem_err("8Ei", HR_Q_RANGE); /* 2^63 */
    expect_mem_err("10E", HR_Q_RANGE);
    expect_mem_err("1e19", HR_Q_RANGE);
    expect_mem("9223372036854775807", INT64_MAX);
    expect_mem_err("9223372036854775808", HR_Q_RANGE);
    expect_mem_err("99999999999999999999Ei", HR_Q_RANGE);
}

static void test_negative(void **state)
{
    (void)state;
    expect_cpu_err("-1", HR_Q_NEGATIVE);
    expect_cpu_err("-100m", HR_Q_NEGATIVE);
    expect_cpu_err("-0.5", HR_Q_NEGATIVE);
    expect_cpu_err("-1Ki", HR_Q_NEGATIVE);
    expect_cpu_err("-1e3", HR_Q_NEGATIVE);
    expect_mem_err("-1", HR_Q_NEGATIVE);
    expect_mem_err("-1Gi", HR_Q_NEGATIVE);
    /* Negative even when it rounds (up, towards +inf) to zero. */
    expect_cpu_err("-0.1m", HR_Q_NEGATIVE);
    expect_mem_err("-0.5", HR_Q_NEGATIVE);
    /* Minus zero is zero, not negative. */
    expect_cpu("-0", 0);
    expect_cpu("-0.000", 0);
}

static void expect_fmt(int64_t milli, const char *want)
{
    char buf[HR_CPU_FMT_MAX];
    memset(buf, 'Z', sizeof buf);
    size_t n = hr_cpu_format_milli(milli, buf, sizeof buf);
    if (n != strlen(want) || strcmp(buf, want) != 0)
        fail_msg("format %" PRId64 ": got \"%.*s\" (len %zu), want \"%s\"", milli, (int)sizeof buf,
                 buf, n, want);
}

static void test_format(void **state)
{
    (void)state;
    expect_fmt(1500, "1500m");
    expect_fmt(2000, "2");
    expect_fmt(0, "0");
    expect_fmt(1, "1m");
    expect_fmt(10, "10m");
    expect_fmt(999, "999m");
    expect_fmt(1000, "1");
    expect_fmt(1001, "1001m");
    expect_fmt(64000, "64");
    expect_fmt(1000000, "1000");
    expect_fmt(INT64_MAX, "9223372036854775807m");
    expect_fmt(INT64_C(9223372036854775000), "9223372036854775");
    /* Slack can be negative and is printed with the same formatter. */
    expect_fmt(-1500, "-1500m");
    expect_fmt(-2000, "-2");
    expect_fmt(INT64_MIN, "-9223372036854775808m");
}

static void test_format_capacity(void **state)
{
    (void)state;
    char buf[HR_CPU_FMT_MAX];
    /* "1500m" needs 6 bytes with its NUL. */
    assert_int_equal(hr_cpu_format_milli(1500, buf, 5), 0);
    assert_int_equal(hr_cpu_format_milli(1500, buf, 6), 5);
    assert_string_equal(buf, "1500m");
    assert_int_equal(hr_cpu_format_milli(1500, buf, 0), 0);
    /* Nothing past cap is touched. */
    memset(buf, 'Z', sizeof buf);
    assert_int_equal(hr_cpu_format_milli(2000, buf, 2), 1);
    assert_string_equal(buf, "2");
    assert_int_equal(buf[2], 'Z');
    memset(buf, 'Z', sizeof buf);
    (void)hr_cpu_format_milli(123456, buf, 3);
    for (size_t i = 3; i < sizeof buf; i++)
        assert_int_equal(buf[i], 'Z');
}

static hr_prng rng_state;

static uint64_t draw(void)
{
    return hr_prng_next(&rng_state);
}

static uint64_t seed_from_env(void)
{
    const char *s = getenv("HR_SEED");
    if (s && *s)
        return strtoull(s, NULL, 0);
    return (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
}

static void test_round_trip(void **state)
{
    (void)state;
    uint64_t seed = seed_from_env();
    hr_prng_seed(&rng_state, seed);
    printf("quantity round trip: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", seed, seed);
    for (int i = 0; i < 10000; i++) {
        /* Uniform over bit lengths, so small values and whole cores are as
         * common as huge ones. */
        int bits = (int)(draw() % 64);
        int64_t v = bits == 0 ? 0 : (int64_t)(draw() >> (64 - bits));
        if (i % 4 == 1)
            v -= v % 1000; /* whole cores take the no-suffix path */
        char buf[HR_CPU_FMT_MAX];
        size_t n = hr_cpu_format_milli(v, buf, sizeof buf);
        if (n == 0 || n != strlen(buf))
            fail_msg("seed %" PRIu64 ": format %" PRId64 " returned %zu", seed, v, n);
        int64_t back = -1;
        hr_qerr e = hr_cpu_parse_milli(buf, n, &back);
        if (e != HR_Q_OK || back != v)
            fail_msg("seed %" PRIu64 ": %" PRId64 " -> \"%s\" -> err %d value %" PRId64, seed, v,
                     buf, (int)e, back);
        /* Canonical: a whole number of cores never carries an "m". */
        if ((v % 1000 == 0) != (buf[n - 1] != 'm'))
            fail_msg("seed %" PRIu64 ": %" PRId64 " formatted as \"%s\"", seed, v, buf);
    }
    printf("quantity round trip: 10000 cases passed (seed %" PRIu64 ")\n", seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_decimal),
        cmocka_unit_test(test_milli_rounds_up),
        cmocka_unit_test(test_decimal_si),
        cmocka_unit_test(test_binary_si),
        cmocka_unit_test(test_exponent),
        cmocka_unit_test(test_sign_and_suffix_combinations),
        cmocka_unit_test(test_general_parse_scale_and_sign),
        cmocka_unit_test(test_binary_suffix_long_mantissa),
        cmocka_unit_test(test_length_is_respected),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_negative),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_capacity),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
