/*
 * selector.h — Kubernetes label selectors, evaluated on plain string pairs.
 *
 * matchLabels entries are represented as In requirements with one value, so
 * one loop evaluates both halves of a metav1.LabelSelector. An empty
 * selector (set, no requirements) matches everything; an unset one matches
 * nothing — the distinction Kubernetes makes between {} and null.
 */
#ifndef HR_CORE_SELECTOR_H
#define HR_CORE_SELECTOR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct hr_labels {
    const char *const *kv; /* kv[2i] key, kv[2i+1] value */
    uint32_t n;            /* number of pairs */
} hr_labels;

/* Value of key, or NULL. */
const char *hr_labels_get(const hr_labels *l, const char *key);

typedef enum hr_sel_op {
    HR_SEL_IN = 0,
    HR_SEL_NOT_IN,
    HR_SEL_EXISTS,
    HR_SEL_DOES_NOT_EXIST,
} hr_sel_op;

typedef struct hr_requirement {
    const char *key;
    uint8_t op; /* hr_sel_op */
    const char *const *values;
    uint32_t n_values;
} hr_requirement;

typedef struct hr_selector {
    bool set;
    const hr_requirement *req;
    uint32_t n;
} hr_selector;

bool hr_selector_matches(const hr_selector *s, const hr_labels *l);

#endif
