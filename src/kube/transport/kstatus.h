/*
 * kstatus.h — what an API server says when it refuses: the Status object in
 * an error body, and the Retry-After header.
 *
 * design §7 branches on outcomes and puts the server's own words into Warning
 * events ("422 invalid: Warning event with the server's message"), so an
 * error must carry Status.message, not just a number. Bodies that are not a
 * Status (a proxy's HTML page, "404 page not found") are quoted instead,
 * shortened and with control bytes masked.
 */
#ifndef HR_KUBE_KSTATUS_H
#define HR_KUBE_KSTATUS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/err.h"

typedef struct hr_kstatus {
    char message[256];  /* Status.message, or the quoted body; "" when empty */
    char reason[64];    /* Status.reason ("NotFound", "Invalid", ...); "" */
    long code;          /* Status.code, 0 when absent */
    long retry_after_s; /* Status.details.retryAfterSeconds, 0 when absent */
    int is_status;      /* the body was a Status object */
} hr_kstatus;

/* Never fails: whatever the body, st describes it as well as it can. */
void hr_kstatus_parse(const char *body, size_t len, hr_kstatus *st);

/* The same for a body whose Content-Type was protobuf (an answer to a
 * request that accepted it: "k8s\0" + runtime.Unknown of a Status, read
 * with kube/decode/pbobj.h; details.retryAfterSeconds is not read, the
 * Retry-After header says the same); anything else is read as
 * hr_kstatus_parse reads it. */
void hr_kstatus_parse_pb(const uint8_t *body, size_t len, hr_kstatus *st);

/* Fill err for a failed request: "<METHOD> <path>: <http> <reason>: <message>".
 * The code is HR_E_NOTFOUND for 404, HR_E_INPUT for other 4xx (the request
 * was wrong), HR_E_IO otherwise (the server or the network). Returns it. */
HR_MUST_CHECK hr_status hr_kstatus_err(hr_err *err, const char *method, const char *path, long http,
                                       const hr_kstatus *st);

/* The longest server-asked wait honoured (design §7): a Retry-After header
 * or a Status's details.retryAfterSeconds beyond it counts as this. A minute
 * covers what kube-apiserver's priority and fairness asks (1 s typically)
 * and what a proxy in front of it plausibly says, while a bogus or hostile
 * value cannot park a node's writes, a watch or a Lease renewal for long. */
#define HR_KRETRY_AFTER_MAX_S 60L

/* Retry-After value (delta-seconds or an HTTP-date) in ms relative to now;
 * 0 when absent or unparsable, never negative, at most
 * HR_KRETRY_AFTER_MAX_S seconds. */
long hr_kretry_after_ms(const char *value, size_t len, time_t now);

#endif
