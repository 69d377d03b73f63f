/*
 * jpvalue.h — a JSON value printed as kubectl prints it, for -o jsonpath and
 * -o custom-columns (plan/jsonpath.h, plan/columns.h).
 *
 * kubectl decodes an object into Go values (a number is an int64 when its
 * text is a whole number that fits, else a float64) and prints them with
 * Go's rules, so the same value prints three ways:
 *   text    jsonpath's result: a string bare, a number as Go's %v (2.5,
 *           1e+06, 1.2345678901234567e+19), true, null; an object or array
 *           as json below
 *   json    Go's json.Marshal: compact, object keys sorted, <>& escaped
 *           as \u003c..., floats in 'f' form unless < 1e-6 or >= 1e21
 *   gov     Go's %v of the decoded value (custom-columns): map[a:1 b:[1 2]],
 *           <nil>, strings bare
 * Numbers are read from the document's raw text (yyjson's
 * YYJSON_READ_NUMBER_AS_RAW) so nothing is lost before the Go rules apply;
 * yyjson's own number values print the same.
 */
#ifndef HR_PLAN_JPVALUE_H
#define HR_PLAN_JPVALUE_H

#include <stdbool.h>
#include <stdint.h>
#include <yyjson.h>

#include "util/buf.h"

typedef enum hr_jpnum_kind { HR_JPNUM_NONE = 0, HR_JPNUM_INT, HR_JPNUM_FLOAT } hr_jpnum_kind;

/* A number value as Go holds it after decoding: int64 or float64. */
typedef struct hr_jpnum {
    hr_jpnum_kind kind;
    int64_t i;
    double f;
} hr_jpnum;

/* v's number (HR_JPNUM_NONE: v is not a number). */
hr_jpnum hr_jpnum_of(yyjson_val *v);

void hr_jpvalue_text(yyjson_val *v, hr_buf *out);
void hr_jpvalue_json(yyjson_val *v, hr_buf *out);
void hr_jpvalue_gov(yyjson_val *v, hr_buf *out);

/* Go's type name of v's decoded value, for messages: string, int64,
 * float64, bool, map[string]interface {}, []interface {}, <nil>. */
const char *hr_jpvalue_type(yyjson_val *v);

#endif
