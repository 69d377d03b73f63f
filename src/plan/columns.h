/*
 * columns.h — kubectl's -o custom-columns=HEADER:PATH,HEADER2:PATH2.
 *
 * As kubectl get prints it: PATH is .a.b, a.b, {.a.b} or {a.b} (made
 * {.a.b}); one row per element of the object's "items" (a List), or one row
 * for an object without "items"; a cell is every value the path finds,
 * comma-separated, printed as Go's %v (plan/jpvalue.h: map[a:1], <nil>),
 * `<none>` when it finds nothing; the headers as given, one header row
 * unless no_headers; kubectl's layout (plan/tabw.h). A key the row lacks
 * is `<none>`, never an error.
 */
#ifndef HR_PLAN_COLUMNS_H
#define HR_PLAN_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct hr_columns hr_columns;

/* Compile a spec; err says kubectl's message for a malformed one. */
HR_MUST_CHECK hr_status hr_columns_parse(const char *spec, hr_columns **out, hr_err *err);
void hr_columns_free(hr_columns *c);

HR_MUST_CHECK hr_status hr_columns_print(const hr_columns *c, yyjson_val *root, bool no_headers,
                                         hr_buf *out, hr_err *err);

#endif
