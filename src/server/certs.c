/*
 * certs.c — load, verify, publish and retire serving certificate pairs
 * (see certs.h for the why of each step).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "server/certs.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/tname.h"

#define MAX_CHAIN 16
#define MAX_PEM (1u << 20)
/* A replaced pair stays allocated this long: any handshake that picked it
 * up has finished (connections time out far sooner). */
#define RETIRE_GRACE_S 300
/* With inotify: the files are stat'ed this often besides (an event missed,
 * the directory itself replaced), and a burst of events is let settle
 * this long before the pair is read (a rotation writes two files). */
#define RESTAT_MS 60000
#define SETTLE_MS 50
#define DIR_EVENTS                                                                      \
    (IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_MODIFY | \
     IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

typedef struct file_id {
    bool present;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id;

typedef struct cert_pair {
    gnutls_pcert_st pcert[MAX_CHAIN];
    unsigned n;
    gnutls_privkey_t key;
    time_t retired_at; /* monotonic seconds */
    struct cert_pair *next;
} cert_pair;

struct hr_certs {
    char dir[PATH_MAX];
    char crt_path[PATH_MAX];
    char key_path[PATH_MAX];
    hr_logger log;

    pthread_mutex_t mu; /* guards cur, retired, generation */
    cert_pair *cur;
    cert_pair *retired;
    uint64_t generation;
    hr_selfsigned *fallback; /* set once before the listeners start; then read-only */

    file_id seen_crt, seen_key; /* last pair of ids a load was tried on */
    /* hr_certs_set_pem's: the certificate PEM of the pair in force (its
     * caller's thread only), so an unchanged Secret is not loaded again. */
    char cur_crt[16384];
    size_t cur_crt_len;

    int stop_fd; /* eventfd: hr_certs_free wakes the thread with it */
    int ino_fd;  /* inotify on dir, -1 when unavailable (then: a poll) */
    bool running;
    unsigned interval_ms;
    pthread_t th;
};

static void pair_free(cert_pair *p)
{
    if (p == NULL)
        return;
    for (unsigned i = 0; i < p->n; i++)
        gnutls_pcert_deinit(&p->pcert[i]);
    if (p->key)
        gnutls_privkey_deinit(p->key);
    free(p);
}

static void stat_id(const char *path, file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) != 0)
        return;
    id->present = true;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime = st.st_mtim;
}

static bool same_id(const file_id *a, const file_id *b)
{
    return a->present == b->present && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* "serial=… not_after=…" of the leaf, for the log line. */
static void describe(const cert_pair *p, char *out, size_t cap)
{
    gnutls_x509_crt_t crt;
    snprintf(out, cap, "serial=? not_after=?");
    if (gnutls_x509_crt_init(&crt) < 0)
        return;
    if (gnutls_x509_crt_import(crt, &p->pcert[0].cert, GNUTLS_X509_FMT_DER) >= 0) {
        unsigned char serial[40];
        size_t sl = sizeof serial;
        char hex[2 * sizeof serial + 1] = "?";
        if (gnutls_x509_crt_get_serial(crt, serial, &sl) >= 0) {
            for (size_t i = 0; i < sl; i++)
                snprintf(hex + 2 * i, 3, "%02X", serial[i]);
        }
        time_t na = gnutls_x509_crt_get_expiration_time(crt);
        struct tm tm;
        char when[32] = "?";
        if (na != (time_t)-1 && gmtime_r(&na, &tm))
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(out, cap, "serial=%s not_after=%s", hex, when);
    }
    gnutls_x509_crt_deinit(crt);
}

/* Check a pair from PEM; NULL with why set when it cannot be used. */
static cert_pair *parse_pair(const char *crt, size_t crt_len, const char *key, size_t key_len,
                             char *why, size_t cap)
{
    if (crt_len > MAX_PEM || key_len > MAX_PEM) {
        snprintf(why, cap, "larger than %u bytes", MAX_PEM);
        return NULL;
    }
    cert_pair *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    gnutls_datum_t dc = {(unsigned char *)crt, (unsigned)crt_len};
    gnutls_datum_t dk = {(unsigned char *)key, (unsigned)key_len};
    unsigned n = MAX_CHAIN;
    int rc = gnutls_pcert_list_import_x509_raw(p->pcert, &n, &dc, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || n == 0) {
        snprintf(why, cap, "tls.crt: %s", rc < 0 ? gnutls_strerror(rc) : "no certificate");
        free(p);
        return NULL;
    }
    p->n = n;
    if ((rc = gnutls_privkey_init(&p->key)) < 0 ||
        (rc = gnutls_privkey_import_x509_raw(p->key, &dk, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        snprintf(why, cap, "tls.key: %s", gnutls_strerror(rc));
        pair_free(p);
        return NULL;
    }
    if (!hr_x509_key_matches(&p->pcert[0], p->key)) {
        snprintf(why, cap, "tls.key does not match tls.crt");
        pair_free(p);
        return NULL;
    }
    return p;
}

/* Read and check a pair; NULL with why set when it cannot be used. */
static cert_pair *load_pair(hr_certs *c, char *why, size_t cap)
{
    char *crt = NULL, *key = NULL;
    size_t crt_len = 0, key_len = 0;
    hr_err err;
    cert_pair *p = NULL;
    if (hr_file_slurp(c->crt_path, MAX_PEM, 1, &crt, &crt_len, &err) ||
        hr_file_slurp(c->key_path, MAX_PEM, 1, &key, &key_len, &err))
        snprintf(why, cap, "%s", err.msg);
    else
        p = parse_pair(crt, crt_len, key, key_len, why, cap);
    if (key)
        memset(key, 0, key_len); /* no private key left in freed memory */
    free(key);
    free(crt);
    return p;
}

/* Free pairs retired longer ago than the grace period. */
static void reap(hr_certs *c, bool all)
{
    time_t now = (time_t)(hr_mono_ms() / 1000);
    pthread_mutex_lock(&c->mu);
    cert_pair **pp = &c->retired;
    cert_pair *dead = NULL;
    while (*pp) {
        cert_pair *p = *pp;
        if (all || now - p->retired_at >= RETIRE_GRACE_S) {
            *pp = p->next;
            p->next = dead;
            dead = p;
        } else {
            pp = &p->next;
        }
    }
    pthread_mutex_unlock(&c->mu);
    while (dead) {
        cert_pair *n = dead->next;
        pair_free(dead);
        dead = n;
    }
}

/* Make p the current pair, the previous one retired. */
static void publish(hr_certs *c, cert_pair *p, const char *from)
{
    char desc[160];
    describe(p, desc, sizeof desc);
    pthread_mutex_lock(&c->mu);
    cert_pair *old = c->cur;
    c->cur = p;
    uint64_t gen = ++c->generation;
    if (old) {
        old->retired_at = (time_t)(hr_mono_ms() / 1000);
        old->next = c->retired;
        c->retired = old;
    }
    pthread_mutex_unlock(&c->mu);
    hr_logf(&c->log, HR_LV_INFO,
            "msg=\"serving certificate loaded\" generation=%llu chain=%u %s "
            "crt=%s",
            (unsigned long long)gen, p->n, desc, from);
}

int hr_certs_check(hr_certs *c)
{
    file_id ic, ik;
    stat_id(c->crt_path, &ic);
    stat_id(c->key_path, &ik);
    reap(c, false);
    /* Each state of the files is tried once: a bad pair is reported once,
     * not every second, and retried when either file changes again. */
    if (same_id(&ic, &c->seen_crt) && same_id(&ik, &c->seen_key))
        return 0;
    c->seen_crt = ic;
    c->seen_key = ik;
    if (!ic.present || !ik.present) {
        hr_logf(&c->log, HR_LV_WARN, "msg=\"serving certificate files missing\" crt=%s key=%s",
                c->crt_path, c->key_path);
        return -1;
    }
    char why[512];
    cert_pair *p = load_pair(c, why, sizeof why);
    if (p == NULL) {
        hr_logf(&c->log, HR_LV_ERROR,
                "msg=\"serving certificate not loaded, keeping the previous "
                "one\" error=\"%s\"",
                why);
        return -1;
    }
    publish(c, p, c->crt_path);
    return 1;
}

hr_status hr_certs_new(const char *dir, const hr_logger *log, hr_certs **out, hr_err *err)
{
    return hr_certs_new_files(dir, "tls.crt", "tls.key", log, out, err);
}

hr_status hr_certs_new_files(const char *dir, const char *crt, const char *key,
                             const hr_logger *log, hr_certs **out, hr_err *err)
{
    *out = NULL;
    hr_certs *c = calloc(1, sizeof *c);
    if (c == NULL)
        return hr_err_set(err, HR_E_NOMEM, "certs: out of memory");
    c->stop_fd = c->ino_fd = -1;
    if ((size_t)snprintf(c->dir, sizeof c->dir, "%s", dir) >= sizeof c->dir ||
        (size_t)snprintf(c->crt_path, sizeof c->crt_path, "%s/%s", dir, crt) >=
            sizeof c->crt_path ||
        (size_t)snprintf(c->key_path, sizeof c->key_path, "%s/%s", dir, key) >=
            sizeof c->key_path) {
        free(c);
        return hr_err_set(err, HR_E_INPUT, "%s: path too long", dir);
    }
    if (log)
        c->log = *log;
    if (pthread_mutex_init(&c->mu, NULL)) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "certs: cannot create locks");
    }
    HR_IGNORE(hr_certs_check(c)); /* it logs a failure; the poll thread tries again */
    *out = c;
    return HR_OK;
}

hr_status hr_certs_new_mem(const char *what, const hr_logger *log, hr_certs **out, hr_err *err)
{
    *out = NULL;
    hr_certs *c = calloc(1, sizeof *c);
    if (c == NULL)
        return hr_err_set(err, HR_E_NOMEM, "certs: out of memory");
    c->stop_fd = c->ino_fd = -1;
    snprintf(c->crt_path, sizeof c->crt_path, "%s", what);
    if (log)
        c->log = *log;
    if (pthread_mutex_init(&c->mu, NULL)) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "certs: cannot create locks");
    }
    *out = c;
    return HR_OK;
}

int hr_certs_set_pem(hr_certs *c, const char *crt, size_t crt_len, const char *key, size_t key_len,
                     char *why, size_t cap)
{
    reap(c, false);
    if (c->cur_crt_len > 0 && c->cur_crt_len == crt_len && memcmp(c->cur_crt, crt, crt_len) == 0)
        return 0;
    cert_pair *p = parse_pair(crt, crt_len, key, key_len, why, cap);
    if (p == NULL)
        return -1;
    if (crt_len <= sizeof c->cur_crt) {
        memcpy(c->cur_crt, crt, crt_len);
        c->cur_crt_len = crt_len;
    } else {
        c->cur_crt_len = 0;
    }
    publish(c, p, c->crt_path);
    return 1;
}

/* Reads every pending inotify event; false when the watch is gone (the
 * directory was removed or replaced: the caller polls and re-adds it). */
static bool drain_events(int fd)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool alive = true;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            return alive; /* EAGAIN: drained */
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
                alive = false;
            p += sizeof *ev + ev->len;
        }
    }
}

/* Waits for the stop eventfd or an inotify event, at most ms; 1: stop, 2:
 * an event, 0: the time passed. */
static int wait_fds(hr_certs *c, int fd, int64_t ms)
{
    struct pollfd pf[2] = {{.fd = c->stop_fd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    int rc = poll(pf, fd >= 0 ? 2 : 1, ms > INT32_MAX ? INT32_MAX : (int)(ms < 0 ? 0 : ms));
    if (rc < 0)
        return 0; /* EINTR: the caller looks at the clock again */
    if (pf[0].revents)
        return 1;
    return rc > 0 && fd >= 0 && pf[1].revents ? 2 : 0;
}

/* The thread: sleeps until the directory changes (inotify), a re-stat is
 * due (RESTAT_MS with inotify, interval_ms without) or hr_certs_free
 * stops it. A quiet daemon's certificates cost one wakeup a minute. */
static void *poll_main(void *arg)
{
    hr_certs *c = arg;
    hr_thread_name("hr-certs");
    bool watching = c->ino_fd >= 0;
    int64_t next = hr_mono_ms() + (watching ? RESTAT_MS : c->interval_ms);
    for (;;) {
        int w = wait_fds(c, watching ? c->ino_fd : -1, next - hr_mono_ms());
        if (w == 1)
            break;
        if (w == 2) {
            watching = drain_events(c->ino_fd);
            /* let the burst settle: both files of a rotation, then one read */
            while ((w = wait_fds(c, watching ? c->ino_fd : -1, SETTLE_MS)) == 2)
                watching = drain_events(c->ino_fd) && watching;
            if (w == 1)
                break;
        } else if (hr_mono_ms() < next) {
            continue; /* interrupted early */
        }
        if (!watching && c->ino_fd >= 0)
            watching = inotify_add_watch(c->ino_fd, c->dir, DIR_EVENTS) >= 0;
        HR_IGNORE(hr_certs_check(c)); /* it logs a failure; the next event or stat tries again */
        next = hr_mono_ms() + (watching ? RESTAT_MS : c->interval_ms);
    }
    return NULL;
}

hr_status hr_certs_start(hr_certs *c, unsigned interval_ms, hr_err *err)
{
    c->interval_ms = interval_ms ? interval_ms : 1000;
    c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->stop_fd < 0)
        return hr_err_set(err, HR_E_NOMEM, "certs: cannot create an eventfd: %s", strerror(errno));
    c->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (c->ino_fd >= 0 && inotify_add_watch(c->ino_fd, c->dir, DIR_EVENTS) < 0) {
        hr_logf(&c->log, HR_LV_WARN,
                "msg=\"cannot watch the certificate directory, polling it\" dir=%s error=\"%s\" "
                "interval_ms=%u",
                c->dir, strerror(errno), c->interval_ms);
        close(c->ino_fd);
        c->ino_fd = -1;
    }
    int rc = pthread_create(&c->th, NULL, poll_main, c);
    if (rc != 0) {
        if (c->ino_fd >= 0)
            close(c->ino_fd);
        close(c->stop_fd);
        c->ino_fd = c->stop_fd = -1;
        return hr_err_set(err, HR_E_NOMEM, "certs: cannot start thread: %s", strerror(rc));
    }
    c->running = true;
    return HR_OK;
}

void hr_certs_free(hr_certs *c)
{
    if (c == NULL)
        return;
    if (c->running) {
        uint64_t one = 1;
        /* An eventfd write of 1 cannot fail short of an overflow no one reaches. */
        HR_IGNORE(write(c->stop_fd, &one, sizeof one));
        pthread_join(c->th, NULL);
        if (c->ino_fd >= 0)
            close(c->ino_fd);
        close(c->stop_fd);
    }
    reap(c, true);
    pair_free(c->cur);
    hr_selfsigned_free(c->fallback);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

bool hr_certs_ready(void *ud)
{
    hr_certs *c = ud;
    pthread_mutex_lock(&c->mu);
    bool ok = c->cur != NULL;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

uint64_t hr_certs_generation(hr_certs *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t g = c->generation;
    pthread_mutex_unlock(&c->mu);
    return g;
}

int hr_certs_select(hr_certs *c, gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key)
{
    pthread_mutex_lock(&c->mu);
    cert_pair *p = c->cur;
    if (p) {
        *pcert = p->pcert;
        *n = p->n;
        *key = p->key;
    }
    pthread_mutex_unlock(&c->mu);
    return p ? 0 : -1;
}

hr_status hr_certs_fallback_selfsigned(hr_certs *c, const char *service, const char *ns,
                                       const char *pod_ip, hr_err *err)
{
    if (hr_certs_ready(c)) {
        hr_logf(&c->log, HR_LV_INFO, "msg=\"metrics certificate: the provided one\" crt=%s",
                c->crt_path);
        return HR_OK;
    }
    if (c->fallback)
        return HR_OK;
    hr_selfsigned *s;
    hr_status st = hr_selfsigned_for_pod(service, ns, pod_ip, &s, err);
    if (st)
        return st;
    pthread_mutex_lock(&c->mu);
    c->fallback = s;
    pthread_mutex_unlock(&c->mu);
    hr_logf(&c->log, HR_LV_INFO,
            "msg=\"metrics certificate: self-signed, made at start (a scraper cannot verify "
            "it); tls.crt and tls.key replace it when they appear\" sha256=%s crt=%s",
            hr_selfsigned_fingerprint(s), c->crt_path);
    return HR_OK;
}

int hr_certs_select_any(hr_certs *c, gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key)
{
    if (hr_certs_select(c, pcert, n, key) == 0)
        return 0;
    pthread_mutex_lock(&c->mu);
    hr_selfsigned *s = c->fallback;
    pthread_mutex_unlock(&c->mu);
    if (s == NULL)
        return -1;
    hr_selfsigned_pair(s, pcert, n, key);
    return 0;
}
