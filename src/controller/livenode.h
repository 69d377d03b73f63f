/*
 * livenode.h — the Node as the API server has it right now (design §6): the
 * read the executor makes before a wave's increases, so a node whose
 * allocatable shrank or that came under pressure since the cache saw it holds
 * them. One GET of the Node, decoded by the cache's own decoder. And the
 * resourceVersion of a write's answer: the API server's answers, read in
 * either encoding, in one place.
 */
#ifndef HR_CONTROLLER_LIVENODE_H
#define HR_CONTROLLER_LIVENODE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/gates.h"
#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

/* Node name read through kc, its requests ended by until (a leader's renew
 * deadline; HR_KUNTIL_NONE: none), into *out; in protobuf when protobuf (a
 * JSON answer is read too), else JSON. *http_status: the answer's status
 * (0: none came). HR_OK, or why it could not be read or decoded. */
HR_MUST_CHECK hr_status hr_live_node_read(hr_kclient *kc, int64_t until, const char *name,
                                          bool protobuf, hr_node *out, long *http_status);

/* metadata.resourceVersion of the object a write answered with (b: the
 * body, protobuf when protobuf, else JSON); 0 when absent or unreadable. */
uint64_t hr_answer_rv(const hr_buf *b, bool protobuf);

#endif
