/*
 * yaml.h — a JSON value as YAML, block style: strings double-quoted (JSON's
 * escapes are YAML's), keys plain (ours are identifiers), numbers as their
 * text (read the document with YYJSON_READ_NUMBER_AS_RAW to keep 1.00 as
 * 1.00). -o yaml of plan, node and every command that prints an object.
 */
#ifndef HR_PLAN_YAML_H
#define HR_PLAN_YAML_H

#include <yyjson.h>

#include "util/buf.h"

void hr_yaml_write(yyjson_val *v, hr_buf *out);

#endif
