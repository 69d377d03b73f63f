/*
 * authz.c — bearer token parsing and the bounded verdict cache (see
 * authz.h).
 */
#include "server/authz.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "util/clock.h"
#include "util/tname.h"

/* A token longer than this is not one the API server issues. */
#define MAX_TOKEN 16384

typedef struct entry {
    unsigned char key[32];
    int64_t expires_ms; /* 0: free */
    hr_authz_verdict v;
} entry;

/* One outstanding review: queued, or running on a review thread. */
typedef struct job {
    unsigned char key[32];
    char *token; /* a C string, wiped before it is freed */
    char verb[16];
    char *path;
    bool running;
    hr_authz_waiter *waiters; /* told when it ends (or on shutdown) */
    struct job *next;         /* a->jobs, oldest first */
} job;

#define MAX_THREADS 8

struct hr_authz {
    hr_authz_opts o;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a job was queued, or shutdown */
    entry *e;
    unsigned n;
    job *jobs; /* outstanding, oldest first; n_jobs of them */
    unsigned n_jobs, n_running;
    bool stopping;
    atomic_bool cancel; /* set with stopping: the reviews in flight give up */
    pthread_t th[MAX_THREADS];
    unsigned n_threads; /* started */
    uint64_t reviews, hits, joined, refused;
};

static void job_free(job *j)
{
    if (j == NULL)
        return;
    if (j->token != NULL) {
        memset(j->token, 0, strlen(j->token));
        free(j->token);
    }
    free(j->path);
    free(j);
}

/* Tell j's waiters v and forget them. Called with a->mu held. */
static void job_tell(job *j, hr_authz_verdict v)
{
    hr_authz_waiter *w = j->waiters;
    j->waiters = NULL;
    while (w != NULL) {
        hr_authz_waiter *next = w->next; /* w is the caller's again after done */
        w->done(w, v);
        w = next;
    }
}

static void job_unlink(hr_authz *a, job *j)
{
    for (job **p = &a->jobs; *p; p = &(*p)->next) {
        if (*p == j) {
            *p = j->next;
            a->n_jobs--;
            return;
        }
    }
}

/* Remember a verdict. Called with a->mu held. */
static void cache_put(hr_authz *a, const unsigned char key[32], hr_authz_verdict v)
{
    int64_t now = hr_mono_ms();
    /* A free or expired slot, else the one closest to expiry. */
    unsigned pick = 0;
    for (unsigned i = 0; i < a->n; i++) {
        if (a->e[i].expires_ms <= now) {
            pick = i;
            break;
        }
        if (a->e[i].expires_ms < a->e[pick].expires_ms)
            pick = i;
    }
    memcpy(a->e[pick].key, key, 32);
    a->e[pick].v = v;
    a->e[pick].expires_ms = now + (v == HR_AUTHZ_ALLOWED ? a->o.allow_ttl_ms : a->o.deny_ttl_ms);
}

static const char *verdict_name(hr_authz_verdict v)
{
    switch (v) {
    case HR_AUTHZ_ALLOWED: return "allowed";
    case HR_AUTHZ_DENIED: return "denied";
    case HR_AUTHZ_UNAUTHENTICATED: return "unauthenticated";
    case HR_AUTHZ_BUSY: return "busy";
    case HR_AUTHZ_UNAVAILABLE: return "unavailable";
    case HR_AUTHZ_PENDING: return "pending";
    case HR_AUTHZ_ERROR: break;
    }
    return "error";
}

/* A review thread: the oldest queued job, reviewed without the lock, its
 * verdict cached (unless an error) and told to its waiters. On shutdown
 * the waiters have been told already; a running job is finished and freed
 * here, its verdict dropped. */
static void *review_main(void *arg)
{
    hr_authz *a = arg;
    hr_thread_name("hr-authz");
    pthread_mutex_lock(&a->mu);
    for (;;) {
        job *j = NULL;
        for (job *k = a->jobs; k && !a->stopping; k = k->next) {
            if (!k->running) {
                j = k;
                break;
            }
        }
        if (j == NULL) {
            if (a->stopping)
                break;
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        j->running = true;
        a->n_running++;
        a->reviews++;
        pthread_mutex_unlock(&a->mu);
        char user[256] = "";
        int64_t until = hr_mono_ms() + a->o.review_timeout_ms;
        hr_authz_verdict v =
            a->o.review(a->o.ud, j->token, j->verb, j->path, until, &a->cancel, user, sizeof user);
        if (v == HR_AUTHZ_PENDING || v == HR_AUTHZ_BUSY || v == HR_AUTHZ_UNAVAILABLE)
            v = HR_AUTHZ_ERROR; /* not a verdict a reviewer may give */
        hr_logf(&a->o.log, HR_LV_DEBUG,
                "msg=\"access reviewed\" path=%s verb=%s user=\"%s\" result=%s", j->path, j->verb,
                user, verdict_name(v));
        pthread_mutex_lock(&a->mu);
        a->n_running--;
        job_unlink(a, j);
        if (v != HR_AUTHZ_ERROR)
            cache_put(a, j->key, v);
        job_tell(j, v); /* none after a shutdown */
        job_free(j);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

hr_status hr_authz_new(const hr_authz_opts *o, hr_authz **out, hr_err *err)
{
    *out = NULL;
    if (o->review == NULL)
        return hr_err_set(err, HR_E_INPUT, "authz: no review callback");
    hr_authz *a = calloc(1, sizeof *a);
    if (a == NULL)
        return hr_err_set(err, HR_E_NOMEM, "authz: out of memory");
    a->o = *o;
    a->n = o->max_entries ? o->max_entries : 256;
    if (!a->o.allow_ttl_ms)
        a->o.allow_ttl_ms = 60000;
    if (!a->o.deny_ttl_ms)
        a->o.deny_ttl_ms = 10000;
    if (!a->o.threads)
        a->o.threads = 2;
    if (a->o.threads > MAX_THREADS)
        a->o.threads = MAX_THREADS;
    if (!a->o.max_pending)
        a->o.max_pending = 16;
    if (!a->o.review_timeout_ms)
        a->o.review_timeout_ms = 5000;
    a->e = calloc(a->n, sizeof *a->e);
    if (a->e == NULL || pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a->e);
        free(a);
        return hr_err_set(err, HR_E_NOMEM, "authz: out of memory");
    }
    if (pthread_cond_init(&a->cv, NULL) != 0) {
        pthread_mutex_destroy(&a->mu);
        free(a->e);
        free(a);
        return hr_err_set(err, HR_E_NOMEM, "authz: out of memory");
    }
    for (unsigned i = 0; i < a->o.threads; i++) {
        int rc = pthread_create(&a->th[i], NULL, review_main, a);
        if (rc != 0) {
            hr_authz_free(a);
            return hr_err_set(err, HR_E_NOMEM, "authz: cannot start a review thread: %s",
                              strerror(rc));
        }
        a->n_threads++;
    }
    *out = a;
    return HR_OK;
}

void hr_authz_shutdown(hr_authz *a)
{
    if (a == NULL)
        return;
    pthread_mutex_lock(&a->mu);
    a->stopping = true;
    atomic_store(&a->cancel, true);
    for (job **p = &a->jobs; *p;) {
        job *j = *p;
        job_tell(j, HR_AUTHZ_UNAVAILABLE);
        if (j->running) {
            p = &j->next; /* its thread frees it when the callback returns */
            continue;
        }
        *p = j->next;
        a->n_jobs--;
        job_free(j);
    }
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void hr_authz_free(hr_authz *a)
{
    if (a == NULL)
        return;
    hr_authz_shutdown(a);
    for (unsigned i = 0; i < a->n_threads; i++)
        pthread_join(a->th[i], NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a->e);
    free(a);
}

const char *hr_authz_bearer(const char *header, size_t *len)
{
    if (header == NULL)
        return NULL;
    while (*header == ' ' || *header == '\t')
        header++;
    if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
        return NULL;
    const char *t = header + 7;
    while (*t == ' ' || *t == '\t')
        t++;
    size_t n = 0;
    while (t[n] > ' ' && t[n] < 0x7f)
        n++;
    /* Only trailing blanks may follow; a token has no inner space. */
    for (const char *p = t + n; *p; p++)
        if (*p != ' ' && *p != '\t')
            return NULL;
    if (n == 0 || n > MAX_TOKEN)
        return NULL;
    *len = n;
    return t;
}

static bool make_key(const char *verb, const char *path, const char *token, size_t tlen,
                     unsigned char key[32])
{
    gnutls_hash_hd_t h;
    if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
        return false;
    bool ok = gnutls_hash(h, verb, strlen(verb) + 1) >= 0 &&
              gnutls_hash(h, path, strlen(path) + 1) >= 0 && gnutls_hash(h, token, tlen) >= 0;
    gnutls_hash_deinit(h, key);
    return ok;
}

/* A new job for this miss, or NULL (out of memory). */
static job *job_new(const unsigned char key[32], const char *tok, size_t tlen, const char *verb,
                    const char *path)
{
    job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    memcpy(j->key, key, sizeof j->key);
    snprintf(j->verb, sizeof j->verb, "%s", verb);
    j->path = strdup(path);
    j->token = malloc(tlen + 1);
    if (j->path == NULL || j->token == NULL) {
        job_free(j);
        return NULL;
    }
    /* The callback wants a C string: the token without trailing blanks. */
    memcpy(j->token, tok, tlen);
    j->token[tlen] = '\0';
    return j;
}

hr_authz_verdict hr_authz_start(hr_authz *a, const char *authorization, const char *verb,
                                const char *path, hr_authz_waiter *w)
{
    size_t tlen = 0;
    const char *tok = hr_authz_bearer(authorization, &tlen);
    if (tok == NULL)
        return HR_AUTHZ_UNAUTHENTICATED;
    unsigned char key[32];
    if (!make_key(verb, path, tok, tlen, key))
        return HR_AUTHZ_ERROR;
    int64_t now = hr_mono_ms();
    hr_authz_verdict v = HR_AUTHZ_PENDING;
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; i < a->n; i++) {
        if (a->e[i].expires_ms > now && memcmp(a->e[i].key, key, sizeof key) == 0) {
            v = a->e[i].v;
            a->hits++;
            break;
        }
    }
    job *j = NULL;
    if (v == HR_AUTHZ_PENDING && a->stopping)
        v = HR_AUTHZ_UNAVAILABLE;
    if (v == HR_AUTHZ_PENDING) {
        for (j = a->jobs; j && memcmp(j->key, key, sizeof key) != 0; j = j->next)
            ;
        if (j != NULL)
            a->joined++;
    }
    if (v == HR_AUTHZ_PENDING && j == NULL) {
        if (a->n_jobs >= a->o.max_pending) {
            a->refused++;
            v = HR_AUTHZ_BUSY;
        } else if ((j = job_new(key, tok, tlen, verb, path)) == NULL) {
            v = HR_AUTHZ_ERROR;
        } else {
            job **p = &a->jobs;
            while (*p)
                p = &(*p)->next;
            *p = j;
            a->n_jobs++;
            pthread_cond_signal(&a->cv);
        }
    }
    if (v == HR_AUTHZ_PENDING) {
        w->next = j->waiters;
        j->waiters = w;
    }
    pthread_mutex_unlock(&a->mu);
    return v;
}

typedef struct sync_waiter {
    hr_authz_waiter w; /* first: the callback's pointer is the struct's */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    hr_authz_verdict v;
} sync_waiter;

static void sync_done(hr_authz_waiter *w, hr_authz_verdict v)
{
    sync_waiter *s = (sync_waiter *)w;
    pthread_mutex_lock(&s->mu);
    s->v = v;
    s->done = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

hr_authz_verdict hr_authz_check(hr_authz *a, const char *authorization, const char *verb,
                                const char *path)
{
    sync_waiter s = {.w = {.done = sync_done}};
    if (pthread_mutex_init(&s.mu, NULL) != 0)
        return HR_AUTHZ_ERROR;
    if (pthread_cond_init(&s.cv, NULL) != 0) {
        pthread_mutex_destroy(&s.mu);
        return HR_AUTHZ_ERROR;
    }
    hr_authz_verdict v = hr_authz_start(a, authorization, verb, path, &s.w);
    if (v == HR_AUTHZ_PENDING) {
        pthread_mutex_lock(&s.mu);
        while (!s.done)
            pthread_cond_wait(&s.cv, &s.mu);
        v = s.v;
        pthread_mutex_unlock(&s.mu);
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    return v;
}

int hr_authz_status(hr_authz_verdict v)
{
    switch (v) {
    case HR_AUTHZ_ALLOWED: return 0;
    case HR_AUTHZ_DENIED: return 403;
    case HR_AUTHZ_UNAUTHENTICATED: return 401;
    case HR_AUTHZ_BUSY: return 429;
    case HR_AUTHZ_UNAVAILABLE: return 503;
    case HR_AUTHZ_PENDING:
    case HR_AUTHZ_ERROR: break;
    }
    return 500;
}

void hr_authz_get_stats(hr_authz *a, hr_authz_stats *out)
{
    pthread_mutex_lock(&a->mu);
    out->reviews = a->reviews;
    out->hits = a->hits;
    out->joined = a->joined;
    out->refused = a->refused;
    out->in_flight = a->n_running;
    out->queued = a->n_jobs - a->n_running;
    pthread_mutex_unlock(&a->mu);
}

void hr_authz_render(void *ud, hr_buf *out)
{
    hr_authz_stats s;
    hr_authz_get_stats(ud, &s);
    hr_buf_printf(out,
                  "# HELP headroom_metrics_auth_reviews_total Token reviews made for the secured "
                  "/metrics (a TokenReview and, when authenticated, a SubjectAccessReview).\n"
                  "# TYPE headroom_metrics_auth_reviews_total counter\n"
                  "headroom_metrics_auth_reviews_total %llu\n"
                  "# HELP headroom_metrics_auth_refused_total Scrapes refused 429: a new token "
                  "while the review queue was full.\n"
                  "# TYPE headroom_metrics_auth_refused_total counter\n"
                  "headroom_metrics_auth_refused_total %llu\n"
                  "# HELP headroom_metrics_auth_reviews_in_flight Token reviews running now.\n"
                  "# TYPE headroom_metrics_auth_reviews_in_flight gauge\n"
                  "headroom_metrics_auth_reviews_in_flight %llu\n"
                  "# HELP headroom_metrics_auth_reviews_queued Token reviews waiting for a "
                  "review thread now.\n"
                  "# TYPE headroom_metrics_auth_reviews_queued gauge\n"
                  "headroom_metrics_auth_reviews_queued %llu\n",
                  (unsigned long long)s.reviews, (unsigned long long)s.refused,
                  (unsigned long long)s.in_flight, (unsigned long long)s.queued);
}
