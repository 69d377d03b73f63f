/*
 * hr_check.h — small assertion helpers shared by the unit tests.
 *
 * cmocka's assert_int_equal prints values as unsigned, which turns a
 * millicore of -1 (HR_NONE) into 18446744073709551615 and hides the bug
 * being reported. These print int64 values as signed and carry a label,
 * so a failing table row names itself.
 */
#ifndef HR_TEST_CHECK_H
#define HR_TEST_CHECK_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define CHECK_I64(label, got, want)                                               \
    do {                                                                          \
        int64_t got_ = (int64_t)(got), want_ = (int64_t)(want);                   \
        if (got_ != want_)                                                        \
            fail_msg("%s: got %" PRId64 ", want %" PRId64, (label), got_, want_); \
    } while (0)

#define CHECK_TRUE(label, cond)                          \
    do {                                                 \
        if (!(cond))                                     \
            fail_msg("%s: expected %s", (label), #cond); \
    } while (0)

#endif
