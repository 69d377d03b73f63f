/*
 * output.h — kubectl's -o for every command that prints an object: json, yaml,
 * jsonpath=TEMPLATE, custom-columns=SPEC, and --no-headers,
 * --allow-missing-template-keys. One parser of -o's value and one printer of
 * a command's object, so plan, node, explain, preflight and version agree.
 *
 * A command builds its object as JSON text (a list is an object with an
 * "items" array, as kubectl's Lists are), then:
 *   hr_output o;
 *   rc = hr_output_parse(prog, cmd, args.val[F_OUTPUT], HR_OUTPUT_ALLOW_DOC, &o);
 *   o.no_headers = hr_args_on(&args, F_NO_HEADERS);              (if it has the flag)
 *   ... its own text when o.kind == HR_OUTPUT_TEXT (or WIDE/NAME), else
 *   st = hr_output_doc(&o, json, len, &out, &err);
 *
 * jsonpath is kubectl's (plan/jsonpath.h); custom-columns prints one row per
 * element of "items" (or one row for an object without it), `<none>` for a
 * path with no value, the headers as given (plan/columns.h).
 */
#ifndef HR_CMD_OUTPUT_H
#define HR_CMD_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/flags.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum hr_output_kind {
    HR_OUTPUT_TEXT = 0, /* no -o, or -o table: the command's own text */
    HR_OUTPUT_WIDE,     /* -o wide: the command's own, wider text */
    HR_OUTPUT_NAME,     /* -o name: the command's own kind/NAME lines */
    HR_OUTPUT_JSON,
    HR_OUTPUT_YAML,
    HR_OUTPUT_JSONPATH, /* -o jsonpath=T, -o jsonpath='T', -o=jsonpath=T */
    HR_OUTPUT_COLUMNS,  /* -o custom-columns=NAME:.path,NAME2:.path2 */
} hr_output_kind;

#define HR_OUTPUT_ALLOW(k) (1u << (k))
/* What every command that prints an object takes. */
#define HR_OUTPUT_ALLOW_DOC                                                  \
    (HR_OUTPUT_ALLOW(HR_OUTPUT_TEXT) | HR_OUTPUT_ALLOW(HR_OUTPUT_JSON) |     \
     HR_OUTPUT_ALLOW(HR_OUTPUT_YAML) | HR_OUTPUT_ALLOW(HR_OUTPUT_JSONPATH) | \
     HR_OUTPUT_ALLOW(HR_OUTPUT_COLUMNS))

typedef struct hr_output {
    hr_output_kind kind;
    const char *arg;    /* the template or the column spec (points into argv), else NULL */
    bool no_headers;    /* --no-headers: tables and custom-columns without the header row */
    bool allow_missing; /* --allow-missing-template-keys (kubectl's default: true) */
} hr_output;

/* The flag rows (a command puts them in its table). */
#define HR_FLAG_NO_HEADERS                                                          \
    {                                                                               \
        "no-headers", 0, HR_FLAG_BOOL, NULL,                                        \
            "tables and custom-columns without the header row (as kubectl's)", NULL \
    }
#define HR_FLAG_ALLOW_MISSING                                                                  \
    {                                                                                          \
        "allow-missing-template-keys", 0, HR_FLAG_BOOL, NULL,                                  \
            "jsonpath: a key the object lacks prints nothing (default true; false: an error)", \
            NULL                                                                               \
    }
/* -o's completion words for a command that prints an object. */
#define HR_OUTPUT_CHOICES "json yaml jsonpath= custom-columns="

/* -o's value (NULL: HR_OUTPUT_TEXT; "table" too) into *o, allow_missing
 * true; kinds is a mask of HR_OUTPUT_ALLOW(...). A kind not in the mask, an
 * unknown format, an empty or malformed template or column spec is a usage
 * error (message on stderr, as hr_usage_error): HR_EXIT_USAGE, else
 * HR_EXIT_OK. */
int hr_output_parse(const char *prog, const hr_command *c, const char *value, unsigned kinds,
                    hr_output *o);

/* Both flags' values from a command's parsed arguments (indices into its
 * table; a negative index: the command lacks that flag). */
void hr_output_flags(hr_output *o, const hr_args *a, int no_headers, int allow_missing);

/* The command's object (JSON text, one value) printed as o says: JSON
 * (indented two spaces, as given, newline), YAML, jsonpath, custom-columns.
 * HR_E_INPUT for TEXT, WIDE, NAME (the command prints those itself), for
 * text that is not JSON, and for a jsonpath error (a missing key with
 * allow_missing false: kubectl's "error executing jsonpath" message). */
HR_MUST_CHECK hr_status hr_output_doc(const hr_output *o, const char *json, size_t len, hr_buf *out,
                                      hr_err *err);

#endif
