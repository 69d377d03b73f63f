/*
 * kversion.h — which Kubernetes server versions kube-headroom supports, from
 * the API server's /version ("major", "minor"): 1.35 and newer, where in-place
 * resize through the pods/resize subresource is GA (design §12). 1.33 and 1.34
 * serve pods/resize in beta (on by default), but the subresource and its
 * resize conditions changed during the beta and the project tests only the
 * GA behaviour, so they are refused like anything older. The one statement of
 * the range in the code: preflight's verdict and the test cluster's refusal
 * (tests/cluster/cluster.sh check_k8s_version) say the same.
 */
#ifndef HR_KUBE_KVERSION_H
#define HR_KUBE_KVERSION_H

#include <stdbool.h>

#define HR_KVERSION_MIN_MAJOR 1
#define HR_KVERSION_MIN_MINOR 35
/* The range in words, for messages. */
#define HR_KVERSION_RANGE "1.35 and newer"

typedef enum hr_kversion_verdict {
    HR_KVERSION_SUPPORTED,   /* 1.35 or newer */
    HR_KVERSION_UNSUPPORTED, /* older: no GA pods/resize */
    HR_KVERSION_UNREADABLE,  /* major or minor missing or not a number */
} hr_kversion_verdict;

/* The verdict on /version's "major" and "minor" (either may be NULL). Both
 * are decimal numbers; "minor" may end in '+', as managed distributions
 * report it ("35+"). Nothing else is accepted: "1.35", "", "x" are
 * unreadable. */
hr_kversion_verdict hr_kversion_check(const char *major, const char *minor);

/* Does a server of that version resize pod-level resources? KEP-5419 is
 * beta and on by default from 1.36 (design §2.13); 1.35 refuses such a
 * resize whatever the node declares. Unreadable reads as no. */
#define HR_KVERSION_POD_RESIZE_MINOR 36
bool hr_kversion_pod_resize(const char *major, const char *minor);

#endif
