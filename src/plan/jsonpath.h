/*
 * jsonpath.h — kubectl's JSONPath templates (-o jsonpath=...) over a yyjson
 * document: pure data in, text out; no I/O.
 *
 * The grammar and the results are kubectl's (k8s.io/client-go's jsonpath,
 * as kubectl get runs it), checked against a real kubectl by
 * tests/unit/test_jsonpath.c:
 *   text outside braces is printed as it is (a backslash too: `\n` is two
 *   characters; {"\n"} is a newline); inside braces, a chain of
 *   $ @  .field  .field\.with\.dots  ['field']  .*  ..field  [N]  [-N]
 *   [a:b]  [a:b:step]  [*]  [i,j]  [?(@.x=="y")] (== != < > <= >=, and
 *   [?(@.x)] for "has x")  "literal" 'literal'  range ... end.
 * One action's values are printed space-separated: a string bare, a number
 * as Go prints it, an object or array as compact JSON with sorted keys
 * (plan/jpvalue.h). A key the object lacks yields nothing, or, with
 * allow_missing false, kubectl's "KEY is not found" error; an index out of
 * range is always an error, as in kubectl.
 *
 * Where kubectl's own result is not deterministic, ours is the sorted one:
 * `.*` and `..` visit an object's members in key order (Go's map order is
 * random).
 *
 * Numbers should be read with YYJSON_READ_NUMBER_AS_RAW (int64 or float64
 * is decided from the text, as Go decodes it).
 */
#ifndef HR_PLAN_JSONPATH_H
#define HR_PLAN_JSONPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <yyjson.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct hr_jsonpath hr_jsonpath;

/* Compile a template. On error *out is NULL and err says kubectl's
 * "error parsing jsonpath TEMPLATE, REASON". */
HR_MUST_CHECK hr_status hr_jsonpath_parse(const char *tmpl, hr_jsonpath **out, hr_err *err);
void hr_jsonpath_free(hr_jsonpath *jp);

/* Print the template's results for root into out. On error (kubectl's
 * "error executing jsonpath ..."), out may hold part of the text. */
HR_MUST_CHECK hr_status hr_jsonpath_print(const hr_jsonpath *jp, yyjson_val *root,
                                          bool allow_missing, hr_buf *out, hr_err *err);

/* The values found for root, every action's in order, for custom-columns;
 * *first_empty tells whether the first action found nothing (kubectl's
 * `<none>`). *vals is malloc'd (free it), NULL when there are none. */
HR_MUST_CHECK hr_status hr_jsonpath_find(const hr_jsonpath *jp, yyjson_val *root,
                                         bool allow_missing, yyjson_val ***vals, size_t *n,
                                         bool *first_empty, hr_err *err);

#endif
