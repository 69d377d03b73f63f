/*
 * flags.c — kubectl-style flag parsing, help and durations (flags.h).
 */
#include "cmd/flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

void hr_args_free(hr_args *a)
{
    free(a->list);
    free(a->pos);
    a->list = a->pos = NULL;
    a->n_list = a->n_pos = 0;
}

const char **hr_args_list(const hr_args *a, size_t flag, int *n)
{
    *n = flag < HR_FLAGS_MAX ? a->list_n[flag] : 0;
    return *n ? a->list + a->list_at[flag] : NULL;
}

/* The list values, parsed in argv order with each one's flag in of[],
 * grouped by flag (each group in argv order) for hr_args_list. */
static int group_lists(hr_args *a, const unsigned char *of)
{
    const char **g = calloc((size_t)a->n_list + 1, sizeof *g);
    if (!g)
        return -1;
    int at = 0;
    for (int f = 0; f < HR_FLAGS_MAX; f++) {
        a->list_at[f] = at;
        for (int i = 0; i < a->n_list; i++)
            if (of[i] == f)
                g[at++] = a->list[i];
        a->list_n[f] = at - a->list_at[f];
    }
    free(a->list);
    a->list = g;
    return 0;
}

bool hr_flag_takes_value(const hr_flag *f)
{
    return f->type == HR_FLAG_STRING || f->type == HR_FLAG_LIST;
}

bool hr_args_on(const hr_args *a, size_t flag)
{
    return flag < HR_FLAGS_MAX && a->val[flag] && strcmp(a->val[flag], "true") == 0;
}

static void synopsis(FILE *f, const char *prog, const hr_command *c)
{
    fprintf(f, "usage: %s %s %s\n", prog, c->name, c->synopsis);
}

int hr_usage_error(const char *prog, const hr_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s %s: ", prog, c->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    synopsis(stderr, prog, c);
    fprintf(stderr, "(\"%s help %s\" for more)\n", prog, c->name);
    return HR_EXIT_USAGE;
}

void hr_command_help(FILE *f, const char *prog, const hr_command *c)
{
    synopsis(f, prog, c);
    fprintf(f, "\n%s\n", c->summary);
    if (c->n_flags)
        fputs("\nflags (--flag value and --flag=value alike):\n", f);
    for (size_t i = 0; i < c->n_flags; i++) {
        const hr_flag *fl = &c->flags[i];
        char head[64];
        int n = snprintf(head, sizeof head, "%s%c%s--%s%s%s", fl->short_name ? "-" : "",
                         fl->short_name ? fl->short_name : ' ', fl->short_name ? ", " : "  ",
                         fl->name, fl->metavar ? " " : "", fl->metavar ? fl->metavar : "");
        if (!fl->short_name)
            n = snprintf(head, sizeof head, "    --%s%s%s", fl->name, fl->metavar ? " " : "",
                         fl->metavar ? fl->metavar : "");
        if (n < 25)
            fprintf(f, "  %-25s%s\n", head, fl->help);
        else
            fprintf(f, "  %s\n  %25s%s\n", head, "", fl->help);
    }
    if (c->details)
        fprintf(f, "\n%s", c->details);
}

const hr_flag *hr_flag_find(const hr_command *c, const char *arg, const char **inline_val)
{
    *inline_val = NULL;
    if (arg[0] != '-' || arg[1] == '\0')
        return NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t i = 0; i < c->n_flags; i++)
            if (strlen(c->flags[i].name) == len && strncmp(c->flags[i].name, name, len) == 0) {
                *inline_val = eq ? eq + 1 : NULL;
                return &c->flags[i];
            }
        return NULL;
    }
    for (size_t i = 0; i < c->n_flags; i++)
        if (c->flags[i].short_name && c->flags[i].short_name == arg[1]) {
            /* -ojson and -o=json, as kubectl reads them. */
            if (arg[2] != '\0')
                *inline_val = arg[2] == '=' ? arg + 3 : arg + 2;
            return &c->flags[i];
        }
    return NULL;
}

static int parse(const char *prog, const hr_command *c, int argc, char **argv, hr_args *a,
                 unsigned char *of);

int hr_args_parse(const char *prog, const hr_command *c, int argc, char **argv, hr_args *a)
{
    memset(a, 0, sizeof *a);
    if (c->n_flags > HR_FLAGS_MAX) {
        fprintf(stderr, "%s %s: %zu flags, more than %d (HR_FLAGS_MAX)\n", prog, c->name,
                c->n_flags, HR_FLAGS_MAX);
        return HR_EXIT_INPUT;
    }
    a->list = calloc((size_t)argc + 1, sizeof *a->list);
    a->pos = calloc((size_t)argc + 1, sizeof *a->pos);
    unsigned char *of = calloc((size_t)argc + 1, 1); /* each list value's flag */
    if (!a->list || !a->pos || !of) {
        free(of);
        fprintf(stderr, "%s %s: out of memory\n", prog, c->name);
        return HR_EXIT_INPUT;
    }
    int rc = parse(prog, c, argc, argv, a, of);
    if (rc == HR_EXIT_OK && !a->help && group_lists(a, of) != 0) {
        fprintf(stderr, "%s %s: out of memory\n", prog, c->name);
        rc = HR_EXIT_INPUT;
    }
    free(of);
    return rc;
}

static int parse(const char *prog, const hr_command *c, int argc, char **argv, hr_args *a,
                 unsigned char *of)
{
    bool flags_done = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (flags_done || arg[0] != '-' || arg[1] == '\0') { /* "-" is stdin: an argument */
            if (a->n_pos >= c->max_args)
                return hr_usage_error(prog, c, "unexpected argument \"%s\"", arg);
            a->pos[a->n_pos++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            flags_done = true;
            continue;
        }
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            hr_command_help(stdout, prog, c);
            a->help = true;
            return HR_EXIT_OK;
        }
        const char *v = NULL;
        const hr_flag *fl = hr_flag_find(c, arg, &v);
        size_t k = fl ? (size_t)(fl - c->flags) : 0;
        if (fl == NULL) {
            const char *eq = strchr(arg, '=');
            return hr_usage_error(prog, c, "unknown flag \"%.*s\"",
                                  (int)(eq ? (size_t)(eq - arg) : strlen(arg)), arg);
        }
        if (fl->type == HR_FLAG_BOOL) {
            if (v == NULL)
                v = "true";
            else if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
                return hr_usage_error(prog, c, "--%s takes true or false, not \"%s\"", fl->name, v);
        } else if (fl->type == HR_FLAG_LEVEL) {
            size_t digits = v ? strspn(v, "0123456789") : 0;
            if (v == NULL)
                v = "1";
            else if (digits == 0 || digits > 2 || v[digits] != '\0')
                return hr_usage_error(prog, c, "--%s takes a level 0-99, not \"%s\"", fl->name, v);
        } else if (v == NULL) {
            if (i + 1 >= argc)
                return hr_usage_error(prog, c, "flag needs a value: %s", arg);
            v = argv[++i];
        }
        if (fl->type == HR_FLAG_LIST) {
            of[a->n_list] = (unsigned char)k;
            a->list[a->n_list++] = v;
        }
        a->val[k] = v;
    }
    return HR_EXIT_OK;
}

long hr_duration_ms(const char *s)
{
    if (s == NULL || *s == '\0')
        return -1;
    bool bare = s[strspn(s, "0123456789")] == '\0'; /* seconds, as kubectl takes them */
    long total = 0;
    for (const char *p = s; *p;) {
        if (*p < '0' || *p > '9')
            return -1;
        long n = 0;
        while (*p >= '0' && *p <= '9') {
            if (n > 100000000)
                return -1;
            n = n * 10 + (*p++ - '0');
        }
        long unit;
        if (bare)
            unit = 1000;
        else if (!strncmp(p, "ms", 2))
            unit = 1, p += 2;
        else if (*p == 's')
            unit = 1000, p++;
        else if (*p == 'm')
            unit = 60000, p++;
        else if (*p == 'h')
            unit = 3600000, p++;
        else
            return -1;
        total += n * unit;
        if (total > 86400000L * 365)
            return -1;
    }
    return total;
}

bool hr_count_arg(const char *s, int max, int *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || n < 1 || n > max)
        return false;
    *out = (int)n;
    return true;
}
