/*
 * podline.h — the part of a pod's canonical line that objdump and cachedump
 * share: every container and every pod-level field of the decoded hr_pod.
 * Both tools must print these the same way (e2e_protobuf_equal.sh diffs
 * their outputs per encoding), so they print them from here, in one place.
 */
#ifndef HR_TESTS_TOOLS_PODLINE_H
#define HR_TESTS_TOOLS_PODLINE_H

#include "core/pod.h"

/* Prints " ctr[...]" per container, named by ctr_names (parallel to q->ctr),
 * then " overhead=... undec=... foreign=..." on stdout; no newline. */
void podline_print(const hr_pod *q, const char *const *ctr_names);

#endif
