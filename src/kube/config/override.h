/*
 * override.h — kubectl's connection flags laid over a resolved kubeconfig
 * (kubeconfig.h, hr_koverrides), the checks every configuration passes
 * last, and the one check of a header value (the transport's too).
 */
#ifndef HR_KUBE_OVERRIDE_H
#define HR_KUBE_OVERRIDE_H

#include <stdbool.h>

#include "kube/config/kubeconfig.h"
#include "util/arena.h"
#include "util/err.h"

/* The flags over c, then what must hold of any configuration: a server, a
 * certificate with its key, one of token and basic auth, impersonation
 * with a user, every impersonation value a valid header value. The last
 * step of every load and parse (kubeconfig.c). */
HR_MUST_CHECK hr_status hr_koverride_apply(hr_kubeconfig *c, const hr_koverrides *ov, hr_err *err);

/* kubectl's server: https:// added to a bare host[:port], trailing '/'
 * dropped, only https:// and http://; into the arena. NULL with *why the
 * reason, or with *why NULL when out of memory. */
const char *hr_kserver_normalize(hr_arena *a, const char *s, const char **why);

/* Whether s may be sent as an HTTP header value: no control character
 * (CR and LF above all: a value must not start a header of its own), no
 * DEL, valid UTF-8, not empty. */
bool hr_kheader_value_ok(const char *s);

#endif
