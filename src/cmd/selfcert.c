/*
 * selfcert.c — the self-managed webhook certificate's sync (see
 * selfcert.h; the decision: server/certplan.h; the objects:
 * kube/write/tlssecret.h).
 */
#include "cmd/selfcert.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/write/tlssecret.h"
#include "server/certinfo.h"
#include "server/certplan.h"
#include "server/selfsigned.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/tname.h"
#include "util/waker.h"
#include "util/wipe.h"

#define MAX_NAMES 32
#define RETRY_S 5
/* An older CA leaves the bundle this long after the serving certificate
 * from the new one (backdated 5 minutes) came out: every replica has
 * loaded it by then. */
#define DROP_OLD_AFTER_S (15 * 60)

struct hr_selfcert {
    hr_selfcert_opts o;
    char names[4096]; /* the names' text; dns[] and ips[] point into it */
    const char *dns[MAX_NAMES];
    size_t n_dns;
    const char *ips[MAX_NAMES];
    size_t n_ips;
    hr_waker wake;
    pthread_t th;
    bool running;
};

/* Split the comma lists into names; a DNS name without a dot is a
 * Service's: also NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local. */
static hr_status split_names(hr_selfcert *s, hr_err *err)
{
    hr_buf b;
    hr_buf_init(&b, sizeof s->names - 1);
    const char *lists[2] = {s->o.dns ? s->o.dns : "", s->o.ips ? s->o.ips : ""};
    for (int l = 0; l < 2; l++) {
        for (const char *p = lists[l]; *p;) {
            size_t n = strcspn(p, ",");
            if (n > 0) {
                hr_buf_printf(&b, "%.*s%c", (int)n, p, '\0');
                if (l == 0 && memchr(p, '.', n) == NULL)
                    hr_buf_printf(&b, "%.*s.%s%c%.*s.%s.svc%c%.*s.%s.svc.cluster.local%c", (int)n,
                                  p, s->o.ns, '\0', (int)n, p, s->o.ns, '\0', (int)n, p, s->o.ns,
                                  '\0');
            }
            p += n;
            p += *p == ',';
        }
        hr_buf_putc(&b, '\n'); /* between the lists */
    }
    if (hr_buf_failed(&b)) {
        hr_buf_free(&b);
        return hr_err_set(err, HR_E_LIMIT, "--webhook-cert-dns/--webhook-cert-ips: too long");
    }
    memcpy(s->names, b.data, b.len);
    s->names[b.len] = '\0';
    size_t len = b.len;
    hr_buf_free(&b);
    int l = 0;
    for (size_t i = 0; i < len;) {
        if (s->names[i] == '\n') {
            l++;
            i++;
            continue;
        }
        const char *name = &s->names[i];
        size_t *n = l == 0 ? &s->n_dns : &s->n_ips;
        if (*n >= MAX_NAMES)
            return hr_err_set(err, HR_E_LIMIT, "--webhook-cert-dns/--webhook-cert-ips: over %d",
                              MAX_NAMES);
        (l == 0 ? s->dns : s->ips)[(*n)++] = name;
        i += strlen(name) + 1;
    }
    return HR_OK;
}

/* A serving pair from ca into leaf_crt/leaf_key. */
static hr_status make_leaf(hr_selfcert *s, const hr_selfsigned *ca, hr_buf *crt, hr_buf *key,
                           hr_err *err)
{
    hr_selfsigned_opts lo = {.common_name = s->n_dns ? s->dns[0] : "kube-headroom-webhook",
                             .dns = s->dns,
                             .n_dns = s->n_dns,
                             .ips = s->ips,
                             .n_ips = s->n_ips,
                             .seconds = s->o.validity_s,
                             .issuer = ca};
    hr_selfsigned *leaf;
    hr_status st = hr_selfsigned_new(&lo, &leaf, err);
    if (st)
        return st;
    st = hr_selfsigned_pem(leaf, crt, key, err);
    hr_selfsigned_free(leaf);
    return st;
}

static void wipe_buf(hr_buf *b)
{
    if (b->data)
        hr_wipe(b->data, b->len);
    hr_buf_free(b);
}

/* The Secret's new values for action a into *w (w->rv already set). */
static hr_status plan_values(hr_selfcert *s, hr_certplan_action a, const hr_ktls_secret *cur,
                             hr_buf *crt, hr_buf *key, hr_buf *ca, hr_buf *ca_key, hr_err *err)
{
    hr_certsrc src = {cur->crt,     cur->key,     cur->ca,     cur->ca_key,
                      cur->crt_len, cur->key_len, cur->ca_len, cur->ca_key_len};
    hr_selfsigned *signer = NULL;
    hr_status st = HR_OK;
    if (a == HR_CERTPLAN_NEW_CA || a == HR_CERTPLAN_ADD_CA) {
        hr_selfsigned_opts co = {.common_name = "kube-headroom-webhook-ca",
                                 .seconds = s->o.ca_validity_s,
                                 .is_ca = true};
        if ((st = hr_selfsigned_new(&co, &signer, err)))
            return st;
        if (a == HR_CERTPLAN_ADD_CA) /* the old ones first, the new one trusted beside */
            hr_buf_append(ca, cur->ca, cur->ca_len);
        st = hr_selfsigned_pem(signer, ca, ca_key, err);
        if (!st && a == HR_CERTPLAN_ADD_CA) { /* the serving pair stays */
            hr_buf_append(crt, cur->crt, cur->crt_len);
            hr_buf_append(key, cur->key, cur->key_len);
        } else if (!st) {
            st = make_leaf(s, signer, crt, key, err);
        }
    } else {
        if ((st = hr_certinfo_signing_ca(&src, &signer, err)))
            return st;
        hr_buf_append(ca_key, cur->ca_key, cur->ca_key_len);
        if (a == HR_CERTPLAN_NEW_LEAF) {
            hr_buf_append(ca, cur->ca, cur->ca_len);
            st = make_leaf(s, signer, crt, key, err);
        } else { /* HR_CERTPLAN_DROP_OLD_CA: the signing CA alone */
            hr_buf drop;
            hr_buf_init(&drop, 0);
            st = hr_selfsigned_pem(signer, ca, &drop, err);
            wipe_buf(&drop);
            hr_buf_append(crt, cur->crt, cur->crt_len);
            hr_buf_append(key, cur->key, cur->key_len);
        }
    }
    hr_selfsigned_free(signer);
    if (!st &&
        (hr_buf_failed(crt) || hr_buf_failed(key) || hr_buf_failed(ca) || hr_buf_failed(ca_key)))
        st = hr_err_set(err, HR_E_NOMEM, "self-managed certificate: out of memory");
    return st;
}

/* Write the Secret for action a; HR_OK when written. */
static hr_status write_secret(hr_selfcert *s, hr_certplan_action a, const hr_ktls_secret *cur,
                              hr_kresult *res, hr_err *err)
{
    hr_buf crt, key, ca, ca_key;
    hr_buf_init(&crt, 0);
    hr_buf_init(&key, 0);
    hr_buf_init(&ca, 0);
    hr_buf_init(&ca_key, 0);
    hr_status st = plan_values(s, a, cur, &crt, &key, &ca, &ca_key, err);
    if (!st) {
        hr_ktls_secret w = {.crt = crt.data,
                            .key = key.data,
                            .ca = ca.data,
                            .ca_key = ca_key.data,
                            .crt_len = crt.len,
                            .key_len = key.len,
                            .ca_len = ca.len,
                            .ca_key_len = ca_key.len};
        memcpy(w.rv, cur->rv, sizeof w.rv);
        st = hr_ktls_secret_update(s->o.k, s->o.ns, s->o.secret, &w, res, err);
    }
    wipe_buf(&crt);
    wipe_buf(&key);
    wipe_buf(&ca);
    wipe_buf(&ca_key);
    return st;
}

/* The Secret settled: serve its pair, make the caBundle its ca.crt. */
static void apply(hr_selfcert *s, const hr_ktls_secret *cur, hr_kmwc *m, bool have_mwc,
                  const char *serial)
{
    char why[256];
    int rc = hr_certs_set_pem(s->o.certs, cur->crt, cur->crt_len, cur->key, cur->key_len, why,
                              sizeof why);
    if (rc < 0)
        hr_logf(&s->o.log, HR_LV_ERROR,
                "msg=\"self-managed certificate not loaded\" secret=%s/%s error=\"%s\"", s->o.ns,
                s->o.secret, why);
    else if (rc > 0)
        hr_logf(&s->o.log, HR_LV_INFO,
                "msg=\"self-managed certificate serving\" secret=%s/%s serial=%s", s->o.ns,
                s->o.secret, serial);
    if (!have_mwc || m->all_match || m->n_webhooks == 0)
        return;
    hr_err err;
    hr_kresult res = {0};
    if (hr_kmwc_set_ca(s->o.k, s->o.mwc, m, cur->ca, cur->ca_len, &res, &err))
        hr_logf(&s->o.log, HR_LV_WARN,
                "msg=\"webhook caBundle not set, retrying\" webhookconfiguration=%s status=%ld "
                "error=\"%s\"",
                s->o.mwc, res.status, err.msg);
    else
        hr_logf(&s->o.log, HR_LV_INFO,
                "msg=\"webhook caBundle set\" webhookconfiguration=%s webhooks=%zu", s->o.mwc,
                m->n_webhooks);
}

/* One sync; the monotonic second of the next. */
static int64_t sync_once(hr_selfcert *s)
{
    int64_t mono = hr_mono_ms() / 1000;
    int64_t now = (int64_t)time(NULL);
    hr_ktls_secret cur;
    hr_kresult res = {0};
    hr_err err;
    if (hr_ktls_secret_get(s->o.k, s->o.ns, s->o.secret, &cur, &res, &err)) {
        hr_logf(&s->o.log, HR_LV_WARN,
                "msg=\"self-managed certificate: cannot read its Secret\" secret=%s/%s "
                "status=%ld error=\"%s\"",
                s->o.ns, s->o.secret, res.status, err.msg);
        return mono + RETRY_S;
    }
    hr_kmwc m = {0};
    hr_kresult mres = {0};
    bool want_mwc = s->o.mwc && s->o.mwc[0]; /* none: /metrics alone, no caBundle to keep */
    bool have_mwc = want_mwc && hr_kmwc_get(s->o.k, s->o.mwc, cur.ca ? cur.ca : "", cur.ca_len, &m,
                                            &mres, &err) == HR_OK;
    if (want_mwc && !have_mwc)
        hr_logf(&s->o.log, HR_LV_WARN,
                "msg=\"self-managed certificate: cannot read the webhook configuration\" "
                "webhookconfiguration=%s status=%ld error=\"%s\"",
                s->o.mwc, mres.status, err.msg);
    hr_certsrc src = {cur.crt,     cur.key,     cur.ca,     cur.ca_key,
                      cur.crt_len, cur.key_len, cur.ca_len, cur.ca_key_len};
    hr_certnames want = {s->dns, s->n_dns, s->ips, s->n_ips};
    hr_certplan_in in;
    char serial[HR_CERTINFO_SERIAL_LEN];
    /* the caBundle in force: its first webhook's (all_match says whether the rest agree) */
    const char *trusted = !want_mwc ? cur.ca : have_mwc ? m.first_bundle : NULL;
    size_t trusted_len = !want_mwc ? cur.ca_len : have_mwc ? m.first_len : 0;
    hr_certinfo_read(&src, &want, trusted, trusted_len, now, &in, serial);
    hr_certplan_policy pol = {.ca_renew_before = s->o.ca_renew_s,
                              .leaf_renew_before = s->o.renew_s,
                              .drop_old_after = DROP_OLD_AFTER_S};
    int64_t next_at;
    hr_certplan_action a = hr_certplan_decide(&in, &pol, now, &next_at);
    int64_t next = mono + HR_SELFCERT_SYNC_S;
    if (a != HR_CERTPLAN_KEEP) {
        hr_kresult wres = {0};
        if (write_secret(s, a, &cur, &wres, &err)) {
            hr_logf(&s->o.log, wres.status == 409 ? HR_LV_INFO : HR_LV_WARN,
                    "msg=\"self-managed certificate: Secret not written%s\" action=%s "
                    "secret=%s/%s error=\"%s\"",
                    wres.status == 409 ? " (another replica wrote it first)" : "",
                    hr_certplan_action_name(a), s->o.ns, s->o.secret, err.msg);
            next = mono + 1;
        } else {
            hr_logf(&s->o.log, HR_LV_INFO,
                    "msg=\"self-managed certificate: Secret written\" action=%s secret=%s/%s "
                    "previous_serial=%s",
                    hr_certplan_action_name(a), s->o.ns, s->o.secret, serial[0] ? serial : "none");
            next = mono; /* read it back, load it, set the caBundle */
        }
    } else {
        apply(s, &cur, &m, have_mwc, serial);
        if (want_mwc && (!have_mwc || !m.all_match))
            next = mono + (have_mwc ? 1 : RETRY_S);
        else if (next_at - now < HR_SELFCERT_SYNC_S)
            next = mono + (next_at - now > 0 ? next_at - now : 1);
    }
    if (have_mwc)
        hr_kmwc_free(&m);
    hr_ktls_secret_free(&cur);
    return next;
}

static void *selfcert_main(void *arg)
{
    hr_selfcert *s = arg;
    hr_thread_name("hr-selfcert");
    for (;;) {
        int64_t next = sync_once(s);
        int64_t wait_s = next - hr_mono_ms() / 1000;
        if (wait_s > 0 && !hr_waker_wait(&s->wake, hr_mono_ns() + wait_s * 1000000000LL))
            break;
        if (hr_waker_stopped(&s->wake))
            break;
    }
    return NULL;
}

hr_status hr_selfcert_start(const hr_selfcert_opts *o, hr_selfcert **out, hr_err *err)
{
    *out = NULL;
    if (!o->ns || !o->ns[0] || !o->secret || !o->secret[0])
        return hr_err_set(err, HR_E_INPUT,
                          "--webhook-cert-self-managed needs --webhook-cert-secret and a "
                          "namespace (POD_NAMESPACE)");
    if (o->renew_s >= o->validity_s || o->ca_renew_s >= o->ca_validity_s)
        return hr_err_set(err, HR_E_INPUT,
                          "--webhook-cert-renew-before must be shorter than "
                          "--webhook-cert-validity (and the CA's likewise)");
    hr_selfcert *s = calloc(1, sizeof *s);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "self-managed certificate: out of memory");
    s->o = *o;
    hr_status st = split_names(s, err);
    if (st) {
        free(s);
        return st;
    }
    if (hr_waker_init(&s->wake) != 0) {
        free(s);
        return hr_err_set(err, HR_E_NOMEM, "self-managed certificate: cannot create a waker");
    }
    if (pthread_create(&s->th, NULL, selfcert_main, s) != 0) {
        hr_waker_destroy(&s->wake);
        free(s);
        return hr_err_set(err, HR_E_NOMEM, "self-managed certificate: cannot start a thread");
    }
    s->running = true;
    hr_logf(&o->log, HR_LV_INFO,
            "msg=\"self-managed certificate\" secret=%s/%s webhookconfiguration=%s dns=%zu ips=%zu "
            "validity_s=%ld renew_before_s=%ld ca_validity_s=%ld ca_renew_before_s=%ld",
            o->ns, o->secret, o->mwc, s->n_dns, s->n_ips, o->validity_s, o->renew_s,
            o->ca_validity_s, o->ca_renew_s);
    *out = s;
    return HR_OK;
}

void hr_selfcert_free(hr_selfcert *s)
{
    if (s == NULL)
        return;
    if (s->running) {
        hr_waker_stop(&s->wake);
        pthread_join(s->th, NULL);
    }
    hr_waker_destroy(&s->wake);
    free(s);
}
