/*
 * attr.h — the compiler attributes the pure core uses.
 *
 * The core includes nothing of ours, so it cannot use util/err.h's
 * HR_MUST_CHECK; this is the same thing under a core name. It goes on the
 * core functions whose result says whether they worked (a parse that
 * leaves its output unset on failure, a validation that returns the
 * problem), so a caller that drops it fails the -Werror build.
 */
#ifndef HR_CORE_ATTR_H
#define HR_CORE_ATTR_H

#define HR_CORE_MUST_CHECK __attribute__((warn_unused_result))

#endif
