/*
 * fuzz_jsonpath.c — kubectl's -o jsonpath= and -o custom-columns= on any
 * template and any document (plan/jsonpath.h, plan/columns.h): the first
 * line is the template (and, as a column spec, the columns), the rest the
 * JSON. Nothing may crash, leak or run away: a template visits a bounded
 * number of values and the output is capped here. The worst template known
 * (corpus/jsonpath/multiplying-template) takes ~5 s here under the
 * sanitizers, against the suite's -timeout=10, and 0.2 s without them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yyjson.h>

#include "plan/columns.h"
#include "plan/jsonpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    size_t tlen = nl ? (size_t)(nl - text) : size;
    char tmpl[4096];
    if (tlen >= sizeof tmpl)
        return 0;
    memcpy(tmpl, text, tlen);
    tmpl[tlen] = '\0';
    static const char fallback[] = "{\"items\":[{\"a\":1,\"b\":[1,2,{\"c\":\"x\"}]},{\"a\":2.5}]}";
    yyjson_doc *d = nl ? yyjson_read(nl + 1, size - tlen - 1, YYJSON_READ_NUMBER_AS_RAW) : NULL;
    if (!d)
        d = yyjson_read(fallback, sizeof fallback - 1, YYJSON_READ_NUMBER_AS_RAW);
    yyjson_val *root = yyjson_doc_get_root(d);
    hr_err err;
    hr_buf out;
    hr_buf_init(&out, 1 << 20);
    hr_jsonpath *jp = NULL;
    if (hr_jsonpath_parse(tmpl, &jp, &err) == HR_OK) {
        /* errors are answers too; one run an input (a template may spend the
         * whole budget, seconds under the sanitizers) */
        HR_IGNORE(hr_jsonpath_print(jp, root, (size & 2) != 0, &out, &err));
        hr_jsonpath_free(jp);
    }
    hr_columns *cols = NULL;
    if (hr_columns_parse(tmpl, &cols, &err) == HR_OK) {
        hr_buf_reset(&out);
        HR_IGNORE(hr_columns_print(cols, root, (size & 1) != 0, &out, &err));
        hr_columns_free(cols);
    }
    hr_buf_free(&out);
    yyjson_doc_free(d);
    return 0;
}
