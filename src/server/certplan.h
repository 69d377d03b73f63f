/*
 * certplan.h — when the self-managed webhook certificate is made, renewed
 * or re-rooted (design §8): a pure decision on what the Secret holds now.
 *
 * The Secret holds a CA bundle (ca.crt), the key of the CA that signs
 * (ca.key: one of the bundle's), and the serving pair (tls.crt, tls.key)
 * it issued. The webhook configuration's caBundle is the bundle. So:
 *  - no usable signing CA: a new CA and a serving certificate, the bundle
 *    that CA alone (the first start, or a Secret someone broke);
 *  - the CA near its end: a new CA is added to the bundle and signs from
 *    now on, the serving certificate stays (the API server trusts both);
 *  - a serving certificate from an older CA of the bundle is replaced only
 *    once the webhook configuration trusts the signing CA;
 *  - a serving certificate missing, broken, for other names or near its
 *    end: a new one from the same CA (the caBundle does not change, so no
 *    admission fails while replicas switch);
 *  - an older CA is dropped from the bundle once the serving certificate
 *    from the signing CA has been out for drop_old_after.
 * No allocation, no I/O: times are seconds since the epoch.
 */
#ifndef HR_SERVER_CERTPLAN_H
#define HR_SERVER_CERTPLAN_H

#include <stdbool.h>
#include <stdint.h>

typedef enum hr_certplan_action {
    HR_CERTPLAN_KEEP,        /* nothing to write */
    HR_CERTPLAN_NEW_CA,      /* a new CA alone in the bundle, and a serving pair from it */
    HR_CERTPLAN_ADD_CA,      /* a new CA appended to the bundle, signing from now on */
    HR_CERTPLAN_NEW_LEAF,    /* a new serving pair from the signing CA */
    HR_CERTPLAN_DROP_OLD_CA, /* the bundle becomes the signing CA alone */
} hr_certplan_action;

/* What the Secret and the webhook configuration hold (certinfo.h reads it). */
typedef struct hr_certplan_in {
    bool ca_ok;           /* ca.key is the key of a CA certificate of ca.crt, valid now */
    int64_t ca_not_after; /* that CA's */
    unsigned n_bundle;    /* certificates in ca.crt */
    bool leaf_ok;    /* tls.crt parses, tls.key is its key, valid now, for the names wanted, and
                      issued by a CA of the bundle */
    bool leaf_by_ca; /* issued by the signing CA (else by another CA of the bundle) */
    int64_t leaf_not_before, leaf_not_after;
    bool webhook_trusts_ca; /* the webhook configuration's caBundle has the signing CA */
} hr_certplan_in;

typedef struct hr_certplan_policy {
    int64_t ca_renew_before;   /* seconds before the CA's end a new one is added */
    int64_t leaf_renew_before; /* seconds before the serving certificate's end it is replaced */
    int64_t drop_old_after;    /* seconds after the serving certificate's notBefore */
} hr_certplan_policy;

/* What to do now; *next_at (may be NULL) gets when to look again at the
 * latest, when nothing changes meanwhile (INT64_MAX: never by time). */
hr_certplan_action hr_certplan_decide(const hr_certplan_in *in, const hr_certplan_policy *p,
                                      int64_t now, int64_t *next_at);

/* The action's name for the log: "keep", "new-ca", "add-ca", "new-leaf", "drop-old-ca". */
const char *hr_certplan_action_name(hr_certplan_action a);

#endif
