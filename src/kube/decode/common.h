/*
 * common.h — what every decoder shares: the metadata all objects carry and
 * label selectors, which other layers use too, then the helpers the
 * decoders are written with (not for other layers).
 *
 * Field paths are a chain of stack frames (parent, key or index) rendered
 * only when an error is reported, so the happy path formats nothing: the
 * watch cache decodes ~100k pods per second through here (design §16).
 */
#ifndef HR_KUBE_DECODE_COMMON_H
#define HR_KUBE_DECODE_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <yyjson.h>

#include "core/pod.h"
#include "core/selector.h"
#include "util/arena.h"
#include "util/err.h"

/* What every object carries. Strings are never NULL ("" when absent). */
typedef struct hr_kmeta {
    const char *ns; /* "" for cluster-scoped objects */
    const char *name;
    const char *uid;
    const char *resource_version;
    hr_labels labels;
} hr_kmeta;

/* A metav1.LabelSelector (matchLabels + matchExpressions). NULL or JSON
 * null gives an unset selector (matches nothing); {} an empty one (matches
 * everything). `what` names the field in error messages. */
HR_MUST_CHECK hr_status hr_decode_selector(yyjson_val *sel, hr_arena *a, const char *what,
                                           hr_selector *out, hr_err *err);

/* Readings that never fail, for the watch cache (cache/sink.c), which must
 * name objects the decoders refuse: a DELETED event, or a relist entry the
 * cache keeps as it was, still names its object.
 * hr_decode_key: metadata.namespace ("" when absent) and metadata.name,
 * copied into the arena; false when the name is missing or empty or the
 * arena cannot grow.
 * hr_decode_generation: metadata.generation when it is an integer, else
 * dflt. */
bool hr_decode_key(yyjson_val *obj, hr_arena *a, const char **ns, const char **name);
int64_t hr_decode_generation(yyjson_val *obj, int64_t dflt);

/* The rest is for the decoders only. */

typedef struct hr_jpath {
    const struct hr_jpath *up;
    const char *key; /* NULL: this frame is an array index */
    int64_t idx;
} hr_jpath;

#define HR_JP_KEY(up_, key_) ((hr_jpath){(up_), (key_), -1})
#define HR_JP_IDX(up_, i_) ((hr_jpath){(up_), NULL, (int64_t)(i_)})

/* Who is being decoded, for messages: "<kind> <ns>/<name>". */
typedef struct hr_kctx {
    hr_arena *a;
    hr_err *err;
    const char *kind; /* "pod", "node", ... */
    const char *ns;   /* may be NULL or "" */
    const char *name; /* may be NULL while metadata is not read yet */
} hr_kctx;

/* Record "<kind> <ns>/<name>: <path>: <message>"; returns code. */
HR_MUST_CHECK hr_status hr_kfail(const hr_kctx *c, const hr_jpath *p, hr_status code,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

HR_MUST_CHECK hr_status hr_knomem(const hr_kctx *c);

/* "a string", "an array", ... for "expected X, got Y" messages. */
const char *hr_jtype_str(yyjson_val *v);

/* Look up key in obj (which must be an object or NULL). The typed getters
 * leave their output at its "absent" value when the key is missing or JSON
 * null, and fail naming the field when it has the wrong type. */
yyjson_val *hr_jget(yyjson_val *obj, const char *key);

HR_MUST_CHECK hr_status hr_jobj(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                yyjson_val **out);
HR_MUST_CHECK hr_status hr_jarr(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                yyjson_val **out);
/* The array at p (*arr NULL when absent or null) and, when present, a
 * zeroed block in c's arena of one `size`-byte item per element (at least
 * one item, so an empty array has one too). More than max elements fails
 * naming p: "<n> <what>, at most <max>". */
HR_MUST_CHECK hr_status hr_jarr_items(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                      size_t max, const char *what, size_t size, yyjson_val **arr,
                                      void **items);
/* String copied into the arena; *out = dflt when absent. */
HR_MUST_CHECK hr_status hr_jstr(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                const char *dflt, const char **out);

/* An array of strings at p (absent or null: none, *present false when
 * present is not NULL), in c's arena. Any other element type is an error. */
HR_MUST_CHECK hr_status hr_jstr_array(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                      const char *const **out, uint32_t *n_out, bool *present);
/* String left in the document (valid while it lives). */
HR_MUST_CHECK hr_status hr_jstr_ref(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                    const char **out, size_t *len);
HR_MUST_CHECK hr_status hr_jbool(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, bool *out);
HR_MUST_CHECK hr_status hr_jint(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, int64_t lo,
                                int64_t hi, int64_t *out);

typedef enum hr_qkind { HR_QK_CPU, HR_QK_MEM, HR_QK_MILLI } hr_qkind;

/* A quantity (string, or integer/raw number) in millicores (CPU), bytes
 * (MEM) or value x1000 (MILLI, for multipliers and ratios); HR_NONE when
 * absent. Negative values are refused. */
HR_MUST_CHECK hr_status hr_jquantity(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                     hr_qkind kind, int64_t *out);

/* The same for a quantity's text (the protobuf decoders' Quantity is a
 * string): errors name the field and quote the text. */
HR_MUST_CHECK hr_status hr_kquantity(const hr_kctx *c, const hr_jpath *p, const char *s, size_t len,
                                     hr_qkind kind, int64_t *out);

/* The same for a quantity that cannot change what the scheduler books — a
 * memory quantity, a CPU limit (design §15): one that is there but does not
 * read (out of range: the API server admits requests.memory: 1e30) is
 * HR_UNBOUNDED, not an error, so one odd field never makes a whole pod
 * undecodable. A JSON value of the wrong type still fails. */
HR_MUST_CHECK hr_status hr_jquantity_soft(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                          hr_qkind kind, int64_t *out);
HR_MUST_CHECK hr_status hr_kquantity_soft(const char *s, size_t len, hr_qkind kind, int64_t *out);

/* metadata: name (required), namespace (required when namespaced), uid,
 * resourceVersion, labels. Sets c->ns and c->name as soon as known. */
HR_MUST_CHECK hr_status hr_decode_meta(hr_kctx *c, yyjson_val *obj, bool namespaced, hr_kmeta *m,
                                       yyjson_val **meta_out);

/* The same for an object being created (an admission request's object):
 * metadata.name may be absent (generateName) and so may metadata.namespace
 * (the request names it); both are then "". */
HR_MUST_CHECK hr_status hr_decode_meta_unnamed(hr_kctx *c, yyjson_val *obj, hr_kmeta *m,
                                               yyjson_val **meta_out);

/* A string-to-string map (labels) copied into the arena. */
HR_MUST_CHECK hr_status hr_decode_labels(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                         hr_labels *out);

HR_MUST_CHECK hr_status hr_decode_selector_at(const hr_kctx *c, const hr_jpath *p, yyjson_val *sel,
                                              hr_selector *out);

#endif
