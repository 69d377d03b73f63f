/*
 * promcheck.c — a strict checker of the Prometheus text exposition format
 * (version 0.0.4), for the tests: `promcheck < page` exits 0 when the page
 * is valid and prints the first fault with its line number otherwise.
 * `promcheck NAME...` also requires each family NAME to be present.
 *
 * Strict on what scrapers reject and on what makes dashboards lie: names
 * and label syntax, escapes, numeric values, one TYPE and one HELP per
 * family before its samples, a family's samples together, no duplicate
 * series, and histograms whose buckets are cumulative, end in le="+Inf",
 * and agree with _count.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 512
#define MAXS 400000

typedef struct family {
    char name[256];
    char type[16];
    bool help, typed, closed;
} family;

static family fams[MAXF];
static int nfam;
static char **series; /* "name{labels}" seen, for duplicates */
static size_t nseries;
static int lineno;

static int fault(const char *what, const char *line)
{
    fprintf(stderr, "promcheck: line %d: %s: %.200s\n", lineno, what, line);
    return 1;
}

static bool name_char(int c, bool first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

static size_t scan_name(const char *s)
{
    size_t i = 0;
    while (s[i] && name_char((unsigned char)s[i], i == 0))
        i++;
    return i;
}

static family *find(const char *name, size_t len)
{
    for (int i = 0; i < nfam; i++)
        if (strlen(fams[i].name) == len && strncmp(fams[i].name, name, len) == 0)
            return &fams[i];
    return NULL;
}

/* The family a sample belongs to: histograms own _bucket/_sum/_count. */
static family *owner(const char *name, size_t len)
{
    family *f = find(name, len);
    if (f)
        return f;
    static const char *const suf[] = {"_bucket", "_sum", "_count"};
    for (int k = 0; k < 3; k++) {
        size_t sl = strlen(suf[k]);
        if (len > sl && strncmp(name + len - sl, suf[k], sl) == 0) {
            f = find(name, len - sl);
            if (f && (!strcmp(f->type, "histogram") || !strcmp(f->type, "summary")))
                return f;
        }
    }
    return NULL;
}

static bool parse_value(const char *s, double *v, const char **end)
{
    if (!strncmp(s, "+Inf", 4)) {
        *v = INFINITY;
        *end = s + 4;
        return true;
    }
    if (!strncmp(s, "-Inf", 4)) {
        *v = -INFINITY;
        *end = s + 4;
        return true;
    }
    if (!strncmp(s, "NaN", 3)) {
        *v = NAN;
        *end = s + 3;
        return true;
    }
    char *e;
    *v = strtod(s, &e);
    if (e == s)
        return false;
    *end = e;
    return true;
}

/* Histogram bookkeeping for the family being read. */
static char hname[256];
static double last_le = -INFINITY, last_count = 0, inf_count = -1;
static char hlabels[2000]; /* labels other than le of the current bucket run */

static int end_histogram(void)
{
    if (hname[0] && inf_count < 0)
        return fault("histogram without an le=\"+Inf\" bucket", hname);
    hname[0] = '\0';
    hlabels[0] = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    series = calloc(MAXS, sizeof *series);
    char line[65536];
    family *current = NULL;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        size_t ll = strlen(line);
        if (ll == 0 || line[ll - 1] != '\n')
            return fault("line does not end with a newline", line);
        line[--ll] = '\0';
        if (ll == 0)
            continue;
        if (line[0] == '#') {
            char kind[8], name[256];
            if (sscanf(line, "# %7s %255s", kind, name) != 2 ||
                (strcmp(kind, "HELP") && strcmp(kind, "TYPE")))
                continue; /* a plain comment */
            size_t nl = scan_name(name);
            if (nl == 0 || name[nl] != '\0')
                return fault("bad metric name in a comment", line);
            family *f = find(name, nl);
            if (f == NULL) {
                if (nfam == MAXF)
                    return fault("too many families", line);
                f = &fams[nfam++];
                snprintf(f->name, sizeof f->name, "%s", name);
            } else if (f->closed) {
                return fault("family comment after its samples", line);
            }
            if (!strcmp(kind, "HELP")) {
                if (f->help)
                    return fault("second HELP for a family", line);
                f->help = true;
            } else {
                const char *t = line + 7 + nl + 1;
                if (f->typed)
                    return fault("second TYPE for a family", line);
                if (strcmp(t, "counter") && strcmp(t, "gauge") && strcmp(t, "histogram") &&
                    strcmp(t, "summary") && strcmp(t, "untyped"))
                    return fault("unknown TYPE", line);
                snprintf(f->type, sizeof f->type, "%s", t);
                f->typed = true;
            }
            continue;
        }
        /* A sample. */
        size_t nl = scan_name(line);
        if (nl == 0)
            return fault("bad metric name", line);
        const char *p = line + nl;
        char labels[2000] = "", le[1024] = "";
        size_t lo = 0;
        if (*p == '{') {
            p++;
            while (*p != '}') {
                size_t kn = 0;
                while (p[kn] && (isalnum((unsigned char)p[kn]) || p[kn] == '_') &&
                       !(kn == 0 && isdigit((unsigned char)p[kn])))
                    kn++;
                if (kn == 0 || p[kn] != '=' || p[kn + 1] != '"')
                    return fault("bad label", line);
                bool is_le = kn == 2 && !strncmp(p, "le", 2);
                const char *key = p;
                p += kn + 2;
                char val[1024];
                size_t vn = 0;
                while (*p && *p != '"') {
                    if (*p == '\\') {
                        if (p[1] != '\\' && p[1] != '"' && p[1] != 'n')
                            return fault("bad escape in a label value", line);
                        p++;
                    }
                    if (vn < sizeof val - 1)
                        val[vn++] = *p;
                    p++;
                }
                if (*p != '"')
                    return fault("unterminated label value", line);
                val[vn] = '\0';
                p++;
                if (is_le)
                    snprintf(le, sizeof le, "%s", val);
                else
                    lo += (size_t)snprintf(labels + lo, sizeof labels - lo, "%.*s=%s,", (int)kn,
                                           key, val);
                if (*p == ',')
                    p++;
                else if (*p != '}')
                    return fault("expected , or } after a label", line);
            }
            p++;
        }
        if (*p != ' ')
            return fault("expected a space before the value", line);
        double v;
        const char *e;
        if (!parse_value(p + 1, &v, &e))
            return fault("bad value", line);
        if (*e == ' ') { /* optional timestamp */
            char *te;
            strtoll(e + 1, &te, 10);
            if (te == e + 1 || *te)
                return fault("bad timestamp", line);
        } else if (*e) {
            return fault("junk after the value", line);
        }

        family *f = owner(line, nl);
        if (f == NULL)
            return fault("sample of a family with no TYPE", line);
        if (current != f) {
            if (current) {
                current->closed = true;
                if (end_histogram())
                    return 1;
            }
            if (f->closed)
                return fault("a family's samples are not together", line);
            current = f;
        }
        char key[2400];
        snprintf(key, sizeof key, "%.*s{%s%s%s}", (int)nl, line, labels, le[0] ? "le=" : "", le);
        for (size_t i = 0; i < nseries; i++)
            if (!strcmp(series[i], key))
                return fault("duplicate series", line);
        if (nseries < MAXS)
            series[nseries++] = strdup(key);

        if (!strcmp(f->type, "counter") && v < 0)
            return fault("negative counter", line);
        if (!strcmp(f->type, "histogram")) {
            size_t fl = strlen(f->name);
            const char *suffix = line + fl;
            if (!strncmp(suffix, "_bucket", 7)) {
                if (!le[0])
                    return fault("bucket without le", line);
                double b;
                const char *be;
                if (!parse_value(le, &b, &be) || *be)
                    return fault("bad le", line);
                if (strcmp(hname, f->name) || strcmp(hlabels, labels)) {
                    if (hname[0] && inf_count < 0)
                        return fault("histogram without an le=\"+Inf\" bucket", line);
                    snprintf(hname, sizeof hname, "%s", f->name);
                    snprintf(hlabels, sizeof hlabels, "%s", labels);
                    last_le = -INFINITY;
                    last_count = 0;
                    inf_count = -1;
                }
                if (b <= last_le)
                    return fault("buckets not in increasing le order", line);
                if (v < last_count)
                    return fault("buckets not cumulative", line);
                last_le = b;
                last_count = v;
                if (isinf(b))
                    inf_count = v;
            } else if (!strncmp(suffix, "_count", 6)) {
                if (inf_count < 0 || v != inf_count)
                    return fault("_count differs from the +Inf bucket", line);
            } else if (strncmp(suffix, "_sum", 4)) {
                return fault("histogram sample that is not _bucket, _sum or _count", line);
            }
        }
    }
    if (current && end_histogram())
        return 1;
    for (int i = 1; i < argc; i++) {
        family *f = find(argv[i], strlen(argv[i]));
        if (f == NULL || !f->typed) {
            fprintf(stderr, "promcheck: family %s is missing\n", argv[i]);
            return 1;
        }
    }
    printf("promcheck: %d lines, %d families, %zu series: valid\n", lineno, nfam, nseries);
    return 0;
}
