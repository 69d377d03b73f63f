/*
 * output.c — kubectl's -o for every command that prints an object (output.h).
 */
#include "cmd/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "cmd/cmd.h"
#include "plan/columns.h"
#include "plan/jsonpath.h"
#include "plan/yaml.h"

static const struct {
    const char *name;
    hr_output_kind kind;
    bool arg; /* NAME=ARG */
} kinds[] = {
    {"table", HR_OUTPUT_TEXT, false},       {"text", HR_OUTPUT_TEXT, false},
    {"wide", HR_OUTPUT_WIDE, false},        {"name", HR_OUTPUT_NAME, false},
    {"json", HR_OUTPUT_JSON, false},        {"yaml", HR_OUTPUT_YAML, false},
    {"jsonpath", HR_OUTPUT_JSONPATH, true}, {"custom-columns", HR_OUTPUT_COLUMNS, true},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* "json, yaml or jsonpath=TEMPLATE": the formats in the mask, for messages. */
static void allowed_list(unsigned mask, char *buf, size_t cap)
{
    size_t n = 0, total = 0;
    for (size_t k = 0; k < N_KINDS; k++)
        total += (mask & HR_OUTPUT_ALLOW(kinds[k].kind)) != 0;
    buf[0] = '\0';
    for (size_t k = 0; k < N_KINDS; k++) {
        if (!(mask & HR_OUTPUT_ALLOW(kinds[k].kind)))
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s%s",
                 n == 0           ? ""
                 : n + 1 == total ? " or "
                                  : ", ",
                 kinds[k].name,
                 kinds[k].kind == HR_OUTPUT_JSONPATH  ? "=TEMPLATE"
                 : kinds[k].kind == HR_OUTPUT_COLUMNS ? "=SPEC"
                                                      : "");
        n++;
    }
}

int hr_output_parse(const char *prog, const hr_command *c, const char *value, unsigned mask,
                    hr_output *o)
{
    memset(o, 0, sizeof *o);
    o->allow_missing = true;
    if (value == NULL)
        return HR_EXIT_OK;
    const char *eq = strchr(value, '=');
    size_t nlen = eq ? (size_t)(eq - value) : strlen(value);
    size_t k = 0;
    while (k < N_KINDS &&
           !(strlen(kinds[k].name) == nlen && strncmp(kinds[k].name, value, nlen) == 0))
        k++;
    char list[200];
    allowed_list(mask, list, sizeof list);
    if (k == N_KINDS || !(mask & HR_OUTPUT_ALLOW(kinds[k].kind)) || (eq && !kinds[k].arg))
        return hr_usage_error(prog, c, "-o takes %s, not \"%s\"", list, value);
    o->kind = kinds[k].kind;
    if (!kinds[k].arg)
        return HR_EXIT_OK;
    o->arg = eq ? eq + 1 : "";
    hr_err err;
    hr_err_clear(&err);
    hr_status st;
    if (o->kind == HR_OUTPUT_JSONPATH) {
        if (!*o->arg)
            return hr_usage_error(prog, c, "template format specified but no template given");
        hr_jsonpath *jp = NULL;
        st = hr_jsonpath_parse(o->arg, &jp, &err);
        hr_jsonpath_free(jp);
    } else {
        hr_columns *cols = NULL;
        st = hr_columns_parse(o->arg, &cols, &err);
        hr_columns_free(cols);
    }
    return st ? hr_usage_error(prog, c, "%s", err.msg) : HR_EXIT_OK;
}

void hr_output_flags(hr_output *o, const hr_args *a, int no_headers, int allow_missing)
{
    if (no_headers >= 0)
        o->no_headers = hr_args_on(a, (size_t)no_headers);
    if (allow_missing >= 0 && a->val[allow_missing])
        o->allow_missing = hr_args_on(a, (size_t)allow_missing);
}

hr_status hr_output_doc(const hr_output *o, const char *json, size_t len, hr_buf *out, hr_err *err)
{
    if (o->kind == HR_OUTPUT_JSON) {
        hr_buf_append(out, json, len);
        if (len == 0 || json[len - 1] != '\n')
            hr_buf_putc(out, '\n');
        return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory") : HR_OK;
    }
    if (o->kind != HR_OUTPUT_YAML && o->kind != HR_OUTPUT_JSONPATH && o->kind != HR_OUTPUT_COLUMNS)
        return hr_err_set(err, HR_E_INPUT, "this output is the command's own");
    yyjson_read_err re;
    yyjson_doc *d = yyjson_read_opts((char *)json, len, YYJSON_READ_NUMBER_AS_RAW, NULL, &re);
    if (!d)
        return hr_err_set(err, HR_E_INPUT, "the object is not JSON: %s at %zu", re.msg, re.pos);
    yyjson_val *root = yyjson_doc_get_root(d);
    hr_status st = HR_OK;
    if (o->kind == HR_OUTPUT_YAML) {
        hr_yaml_write(root, out);
    } else if (o->kind == HR_OUTPUT_JSONPATH) {
        hr_jsonpath *jp = NULL;
        st = hr_jsonpath_parse(o->arg ? o->arg : "", &jp, err);
        if (!st)
            st = hr_jsonpath_print(jp, root, o->allow_missing, out, err);
        hr_jsonpath_free(jp);
    } else {
        hr_columns *cols = NULL;
        st = hr_columns_parse(o->arg, &cols, err);
        if (!st)
            st = hr_columns_print(cols, root, o->no_headers, out, err);
        hr_columns_free(cols);
    }
    yyjson_doc_free(d);
    if (!st && hr_buf_failed(out))
        st = hr_err_set(err, HR_E_NOMEM, "out of memory");
    return st;
}
