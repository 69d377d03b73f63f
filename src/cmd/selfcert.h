/*
 * selfcert.h — the self-managed webhook certificate (design §8,
 * `headroom run --webhook-cert-self-managed`): a thread in every replica
 * that keeps the chart's Secret holding a CA and a serving pair it issued,
 * the webhook configuration's caBundle holding the CA, and the serving
 * certificate holder (server/certs.h) serving the Secret's pair.
 *
 * Every sync reads the Secret and the configuration, asks certplan.h what
 * to do, writes the Secret with the resourceVersion it read (the replica
 * that loses the race reads again and takes the winner's), and once the
 * Secret needs nothing, loads its pair and sets the caBundle when it
 * differs. It syncs every HR_SELFCERT_SYNC_S seconds, sooner when a
 * renewal falls due, at once after a write.
 */
#ifndef HR_CMD_SELFCERT_H
#define HR_CMD_SELFCERT_H

#include "kube/transport/client.h"
#include "server/certs.h"
#include "util/err.h"
#include "util/log.h"

#define HR_SELFCERT_SYNC_S 10

typedef struct hr_selfcert_opts {
    hr_kclient *k;
    hr_certs *certs;                /* fed the Secret's pair (hr_certs_new_mem) */
    const char *ns;                 /* the Secret's namespace: ours */
    const char *secret;             /* its name */
    const char *mwc;                /* the MutatingWebhookConfiguration's name; NULL: none */
    const char *dns, *ips;          /* comma-separated; a DNS name without a dot is a Service's */
    long validity_s, renew_s;       /* the serving certificate's */
    long ca_validity_s, ca_renew_s; /* the CA's */
    hr_logger log;
} hr_selfcert_opts;

typedef struct hr_selfcert hr_selfcert;

/* Start the thread (the first sync is on it too). */
HR_MUST_CHECK hr_status hr_selfcert_start(const hr_selfcert_opts *o, hr_selfcert **out,
                                          hr_err *err);

/* Stop the thread and free everything. */
void hr_selfcert_free(hr_selfcert *s);

#endif
