/*
 * kcnames.h — the names of the contexts, clusters or users the kubeconfig
 * files hold, for shell completion (`headroom __complete --context ''`).
 *
 * The files are the ones kubeconfig.h's rules find — --kubeconfig, else
 * $KUBECONFIG's (colon-separated, missing ones skipped), else
 * ~/.kube/config — read in that order, each name once (the first file that
 * has it, as the merge takes it). Nothing is resolved: no file an entry
 * names is read, no credential is fetched, and an entry need not be valid
 * to be named, so a broken context can still be completed (and then
 * reported by the command that uses it).
 */
#ifndef HR_KUBE_KCNAMES_H
#define HR_KUBE_KCNAMES_H

#include "kube/config/kubeconfig.h"
#include "util/err.h"

/* Called once per name, in file order; name is valid during the call. */
typedef void (*hr_kcname_fn)(void *ud, const char *name);

/* Every `name` of list_key ("contexts", "clusters" or "users") of the
 * files o's rules find (o: kubeconfig, env_kubeconfig and home are read;
 * NULL: the real environment). No file found: HR_E_NOTFOUND. A file that
 * cannot be read or is not YAML: its error, after the names of the files
 * before it were given. */
HR_MUST_CHECK hr_status hr_kubeconfig_names(const hr_kubeconfig_opts *o, const char *list_key,
                                            hr_kcname_fn fn, void *ud, hr_err *err);

#endif
