/*
 * yaml.c — YAML out of a JSON value (yaml.h).
 */
#include "plan/yaml.h"

#include <stdbool.h>
#include <stdlib.h>

static void yaml_val(yyjson_val *v, int indent, bool in_seq, hr_buf *b);

static void yaml_scalar(yyjson_val *v, hr_buf *b)
{
    size_t len = 0;
    char *t = yyjson_val_write(v, 0, &len);
    if (t)
        hr_buf_append(b, t, len);
    free(t);
}

static void yaml_val(yyjson_val *v, int indent, bool in_seq, hr_buf *b)
{
    size_t i, max;
    if (yyjson_is_obj(v) && yyjson_obj_size(v) > 0) {
        yyjson_val *k, *x;
        bool first = true;
        yyjson_obj_foreach(v, i, max, k, x)
        {
            if (!(first && in_seq))
                hr_buf_fill(b, ' ', (size_t)indent);
            first = false;
            hr_buf_printf(b, "%s:", yyjson_get_str(k));
            bool block = (yyjson_is_obj(x) && yyjson_obj_size(x)) ||
                         (yyjson_is_arr(x) && yyjson_arr_size(x));
            if (block) {
                hr_buf_putc(b, '\n');
                yaml_val(x, yyjson_is_arr(x) ? indent : indent + 2, false, b);
            } else {
                hr_buf_putc(b, ' ');
                yaml_val(x, indent, false, b);
                hr_buf_putc(b, '\n');
            }
        }
    } else if (yyjson_is_arr(v) && yyjson_arr_size(v) > 0) {
        yyjson_val *x;
        yyjson_arr_foreach(v, i, max, x)
        {
            hr_buf_fill(b, ' ', (size_t)indent);
            hr_buf_puts(b, "- ");
            if (yyjson_is_obj(x) && yyjson_obj_size(x)) {
                yaml_val(x, indent + 2, true, b);
            } else {
                yaml_val(x, indent + 2, false, b);
                hr_buf_putc(b, '\n');
            }
        }
    } else {
        yaml_scalar(v, b); /* a scalar, [] or {} */
    }
}

void hr_yaml_write(yyjson_val *v, hr_buf *out)
{
    yaml_val(v, 0, false, out);
}
