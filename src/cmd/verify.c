/*
 * verify.c — `headroom verify`: does a running release work? The chart's
 * `helm test` Pod runs it (charts/kube-headroom/templates/tests/), in an
 * image with no shell and no curl. One line per check, PASS / SKIP / FAIL,
 * exit 1 when any fails:
 *
 *   config   the HeadroomConfig "cluster" has condition Ready=True for its
 *            generation. None at all: SKIP (the controller runs with the
 *            defaults, in dry-run), unless --require-config (the release made
 *            one) makes that a FAIL.
 *   metrics  GET --metrics-url with the pod's ServiceAccount token answers 200
 *            with headroom_build_info. The server's certificate is verified
 *            against --metrics-ca when given; otherwise the line says it was
 *            not (the self-signed default, design §9.3).
 *   webhook  with --webhook-url: POST an AdmissionReview for a small
 *            Burstable pod (one container, a CPU request, no limit) straight
 *            to the webhook, which must answer it (same uid) allowed. With a
 *            live config (spec.dryRun false) the answer must carry a patch
 *            setting limits.cpu; in dry-run none is due (admission.h), and
 *            the line says so. A direct POST rather than a server-side
 *            dry-run create: the latter passes failurePolicy Ignore, so a
 *            webhook that does not answer would look like one that chose
 *            not to patch.
 *
 * A failing check is tried again every 2 s until --timeout (a config not
 * Ready yet right after an install). Thin: the API server is read through
 * the commands' client (live.h), the answer judged by webhook/reply.h; the
 * two URLs are plain libcurl requests, since they are not the API server.
 */
#include "cmd/verify.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yyjson.h>

#include "cmd/conn.h"
#include "cmd/httpc.h"
#include "cmd/live.h"
#include "core/names.h"
#include "kube/decode/cfgstatus.h"
#include "kube/transport/curlproc.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/wipe.h"
#include "webhook/reply.h"

#define TOKEN_FILE "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define DEFAULT_TIMEOUT_MS 60000
#define RETRY_MS 2000
#define BODY_MAX (16u << 20)

enum {
    F_CONN,
    F_REQUEST_TIMEOUT = F_CONN + HR_CONN_N,
    F_REQUIRE_CONFIG,
    F_METRICS_URL,
    F_METRICS_CA,
    F_TOKEN_FILE,
    F_WEBHOOK_URL,
    F_WEBHOOK_CA,
    F_WEBHOOK_NS,
    F_TIMEOUT,
    F_N
};

static const hr_flag verify_flags[F_N] = {
    [F_CONN] = HR_CONN_FLAGS,
    [F_REQUEST_TIMEOUT] = HR_FLAG_REQUEST_TIMEOUT,
    [F_REQUIRE_CONFIG] = {"require-config", 0, HR_FLAG_BOOL, NULL,
                          "no HeadroomConfig \"cluster\" is a FAIL, not a SKIP", NULL},
    [F_METRICS_URL] =
        {"metrics-url", 0, HR_FLAG_STRING, "URL",
         "the daemon's /metrics, e.g. https://kube-headroom-metrics.NS.svc:8443/metrics\n"
         "                           (none: the check is skipped)",
         NULL},
    [F_METRICS_CA] = {"metrics-ca", 0, HR_FLAG_STRING, "FILE",
                      "verify /metrics' certificate against this CA (PEM); none: not verified",
                      "@file"},
    [F_TOKEN_FILE] = {"token-file", 0, HR_FLAG_STRING, "FILE",
                      "the bearer token for /metrics (default the pod's ServiceAccount token)",
                      "@file"},
    [F_WEBHOOK_URL] =
        {"webhook-url", 0, HR_FLAG_STRING, "URL",
         "the webhook's endpoint, e.g. https://kube-headroom-webhook.NS.svc:443/mutate\n"
         "                           (none: the check is skipped)",
         NULL},
    [F_WEBHOOK_CA] = {"webhook-ca", 0, HR_FLAG_STRING, "FILE",
                      "verify the webhook's certificate against this CA (PEM); none: not verified",
                      "@file"},
    [F_WEBHOOK_NS] = {"webhook-namespace", 0, HR_FLAG_STRING, "NS",
                      "the namespace of the pod under review (default \"default\")", NULL},
    [F_TIMEOUT] = {"timeout", 0, HR_FLAG_STRING, "DURATION",
                   "try a failing check again until this long has passed (default 60s)", NULL},
};
HR_FLAGS_FIT(F_N);

const hr_command hr_verify_command = {
    "verify",
    "[flags]",
    "Check a running release: config Ready, /metrics with a token, the webhook (helm test).",
    "One line per check (PASS, SKIP or FAIL); exit 1 when any fails. The chart's\n"
    "`helm test` runs it with its Services' URLs (docs/cli.md).\n",
    verify_flags,
    F_N,
    0,
    hr_cmd_verify,
};

typedef struct verify {
    hr_conn conn;
    long request_ms, timeout_ms;
    bool require_config;
    const char *metrics_url, *metrics_ca, *token_file;
    const char *webhook_url, *webhook_ca, *webhook_ns;
    bool live; /* the HeadroomConfig says dryRun: false */
} verify;

/* A check's verdict: 0 pass, 1 fail, 2 skip; the line's text in msg. */
enum { V_PASS, V_FAIL, V_SKIP };
typedef int (*check_fn)(verify *v, char *msg, size_t cap);

static int say(char *msg, size_t cap, int verdict, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int say(char *msg, size_t cap, int verdict, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return verdict;
}

/* ------------------------------------------------------------ config */

static int check_config(verify *v, char *msg, size_t cap)
{
    hr_kclient *k = NULL;
    hr_err err;
    if (hr_live_client(&v->conn.o, v->request_ms, &k, &err) != HR_OK)
        return say(msg, cap, V_FAIL, "config: no client: %s", err.msg);
    hr_buf b;
    hr_buf_init(&b, BODY_MAX);
    hr_status st = hr_live_get(
        k, "/apis/" HR_GROUP "/" HR_VERSION "/headroomconfigs/" HR_CONFIG_NAME, &b, &err);
    hr_kclient_free(k);
    int verdict;
    if (st == HR_E_NOTFOUND) {
        verdict = say(msg, cap, v->require_config ? V_FAIL : V_SKIP,
                      "config: no HeadroomConfig \"" HR_CONFIG_NAME "\"%s",
                      v->require_config ? " (the release made one)"
                                        : ": the controller runs with the defaults, in dry-run");
        hr_buf_free(&b);
        return verdict;
    }
    if (st != HR_OK) {
        hr_buf_free(&b);
        return say(msg, cap, V_FAIL, "config: %s", err.msg);
    }
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    hr_buf_free(&b);
    yyjson_val *root = yyjson_doc_get_root(d);
    if (!yyjson_is_obj(root)) {
        yyjson_doc_free(d);
        return say(msg, cap, V_FAIL, "config: the HeadroomConfig is not a JSON object");
    }
    v->live = yyjson_is_false(yyjson_ptr_get(root, "/spec/dryRun"));
    hr_arena a;
    hr_arena_init(&a, 4096);
    hr_kcfg_status s;
    if (hr_decode_config_status(root, &a, &s, &err) != HR_OK) {
        verdict = say(msg, cap, V_FAIL, "config: its status does not decode: %s", err.msg);
    } else {
        const hr_kcondition *ready = NULL;
        for (size_t i = 0; i < s.n_cond; i++)
            if (strcmp(s.cond[i].type, "Ready") == 0)
                ready = &s.cond[i];
        if (!ready)
            verdict =
                say(msg, cap, V_FAIL, "config: no Ready condition yet (is a controller running?)");
        else if (strcmp(ready->status, "True") != 0)
            verdict = say(msg, cap, V_FAIL, "config: Ready=%s (%s: %s)", ready->status,
                          ready->reason, ready->message);
        else if (ready->observed_generation >= 0 && ready->observed_generation < s.generation)
            verdict = say(msg, cap, V_FAIL, "config: Ready=True, but for generation %lld of %lld",
                          (long long)ready->observed_generation, (long long)s.generation);
        else
            verdict = say(msg, cap, V_PASS,
                          "config: HeadroomConfig \"" HR_CONFIG_NAME "\" Ready=True (%s), %s",
                          ready->reason, v->live ? "live" : "dry-run");
    }
    hr_arena_free(&a);
    yyjson_doc_free(d);
    return verdict;
}

/* One request to url (a POST of body when not NULL), verified against ca
 * when given; the status (0: none came) and the body into out, or why. */
static long http_do(const verify *v, const char *url, const char *ca, const char *auth,
                    const char *body, hr_buf *out, char *why, size_t cap)
{
    hr_httpc_req r = {url, ca, auth, body, v->request_ms, "headroom-verify"};
    return hr_httpc_do(&r, out, why, cap);
}

/* ------------------------------------------------------------ metrics */

static int check_metrics(verify *v, char *msg, size_t cap)
{
    if (!v->metrics_url)
        return say(msg, cap, V_SKIP, "metrics: no --metrics-url");
    char *tok = NULL;
    size_t len = 0;
    hr_err err;
    if (hr_file_slurp(v->token_file, 64 * 1024, 1, &tok, &len, &err) != HR_OK)
        return say(msg, cap, V_FAIL, "metrics: the token: %s", err.msg);
    while (len && (tok[len - 1] == '\n' || tok[len - 1] == '\r'))
        tok[--len] = '\0';
    hr_buf auth, b;
    hr_buf_init(&auth, 0);
    hr_buf_printf(&auth, "Authorization: Bearer %s", tok);
    hr_wipe(tok, len);
    free(tok);
    hr_buf_init(&b, BODY_MAX);
    char why[CURL_ERROR_SIZE + 64] = "";
    long status = hr_buf_failed(&auth) ? 0
                                       : http_do(v, v->metrics_url, v->metrics_ca,
                                                 hr_buf_str(&auth), NULL, &b, why, sizeof why);
    hr_wipe(auth.data, auth.len);
    hr_buf_free(&auth);
    const char *verified = v->metrics_ca ? "certificate verified against --metrics-ca"
                                         : "certificate NOT verified (no --metrics-ca)";
    int verdict;
    if (status == 0)
        verdict = say(msg, cap, V_FAIL, "metrics: GET %s: %s", v->metrics_url,
                      why[0] ? why : "no answer");
    else if (status != 200)
        verdict = say(msg, cap, V_FAIL, "metrics: GET %s: HTTP %ld (the token's RBAC?)",
                      v->metrics_url, status);
    else if (!strstr(hr_buf_str(&b), "headroom_build_info"))
        verdict = say(msg, cap, V_FAIL, "metrics: GET %s: 200 without headroom_build_info",
                      v->metrics_url);
    else
        verdict = say(msg, cap, V_PASS, "metrics: GET %s: 200 with headroom_build_info; %s",
                      v->metrics_url, verified);
    hr_buf_free(&b);
    return verdict;
}

/* ------------------------------------------------------------ webhook */

static int check_webhook(verify *v, char *msg, size_t cap)
{
    if (!v->webhook_url)
        return say(msg, cap, V_SKIP, "webhook: no --webhook-url");
    char uid[64];
    snprintf(uid, sizeof uid, "headroom-verify-%ld-%lld", (long)getpid(), (long long)time(NULL));
    hr_buf req, b;
    hr_buf_init(&req, 0);
    hr_buf_printf(&req,
                  "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"%s\","
                  "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                  "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
                  "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                  "\"name\":\"headroom-verify\",\"namespace\":\"%s\",\"operation\":\"CREATE\","
                  "\"userInfo\":{\"username\":\"headroom-verify\"},\"dryRun\":true,"
                  "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                  "\"metadata\":{\"name\":\"headroom-verify\",\"namespace\":\"%s\"},"
                  "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"headroom-verify\","
                  "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}}}",
                  uid, v->webhook_ns, v->webhook_ns);
    hr_buf_init(&b, BODY_MAX);
    char why[CURL_ERROR_SIZE + 64] = "";
    long status = hr_buf_failed(&req) ? 0
                                      : http_do(v, v->webhook_url, v->webhook_ca, NULL,
                                                hr_buf_str(&req), &b, why, sizeof why);
    hr_buf_free(&req);
    const char *verified = v->webhook_ca ? "certificate verified against --webhook-ca"
                                         : "certificate NOT verified (no --webhook-ca)";
    int verdict;
    hr_wh_reply r;
    hr_err err;
    if (status == 0)
        verdict = say(msg, cap, V_FAIL, "webhook: POST %s: %s", v->webhook_url,
                      why[0] ? why : "no answer");
    else if (status != 200)
        verdict = say(msg, cap, V_FAIL, "webhook: POST %s: HTTP %ld", v->webhook_url, status);
    else if (hr_wh_reply_parse(hr_buf_str(&b), b.len, uid, &r, &err) != HR_OK)
        verdict = say(msg, cap, V_FAIL, "webhook: POST %s: %s", v->webhook_url, err.msg);
    else if (!r.allowed)
        verdict =
            say(msg, cap, V_FAIL, "webhook: a Burstable pod in %s was refused", v->webhook_ns);
    else if (v->live && r.n_cpu == 0)
        verdict = say(msg, cap, V_FAIL,
                      "webhook: allowed a Burstable pod in %s without setting limits.cpu, "
                      "though the config is live (is %s managed?)",
                      v->webhook_ns, v->webhook_ns);
    else if (v->live)
        verdict = say(msg, cap, V_PASS,
                      "webhook: allowed a Burstable pod in %s with limits.cpu "
                      "set (%d container%s); %s",
                      v->webhook_ns, r.n_cpu, r.n_cpu == 1 ? "" : "s", verified);
    else
        verdict = say(msg, cap, V_PASS,
                      "webhook: allowed a Burstable pod in %s%s (dry-run: "
                      "no patch is due); %s",
                      v->webhook_ns, r.has_patch ? " with a patch" : "", verified);
    hr_buf_free(&b);
    return verdict;
}

/* ------------------------------------------------------------ the command */

int hr_cmd_verify(const char *prog, int argc, char **argv)
{
    hr_args a;
    int rc = hr_args_parse(prog, &hr_verify_command, argc, argv, &a);
    verify v = {
        .require_config = hr_args_on(&a, F_REQUIRE_CONFIG),
        .metrics_url = a.val[F_METRICS_URL],
        .metrics_ca = a.val[F_METRICS_CA],
        .token_file = a.val[F_TOKEN_FILE] ? a.val[F_TOKEN_FILE] : TOKEN_FILE,
        .webhook_url = a.val[F_WEBHOOK_URL],
        .webhook_ca = a.val[F_WEBHOOK_CA],
        .webhook_ns = a.val[F_WEBHOOK_NS] ? a.val[F_WEBHOOK_NS] : "default",
    };
    const char *rt = a.val[F_REQUEST_TIMEOUT], *to = a.val[F_TIMEOUT];
    bool help = a.help;
    if (rc == HR_EXIT_OK && !help)
        rc = hr_conn_opts(prog, &hr_verify_command, &a, F_CONN, &v.conn);
    hr_args_free(&a); /* the values stay: they point into argv */
    if (rc != HR_EXIT_OK || help)
        return rc;
    v.request_ms = rt ? hr_duration_ms(rt) : 0;
    if (v.request_ms < 0)
        return hr_usage_error(prog, &hr_verify_command,
                              "--request-timeout: \"%s\" is not a duration", rt);
    v.timeout_ms = to ? hr_duration_ms(to) : DEFAULT_TIMEOUT_MS;
    if (v.timeout_ms < 0)
        return hr_usage_error(prog, &hr_verify_command, "--timeout: \"%s\" is not a duration", to);
    const char *urls[] = {v.metrics_url, v.webhook_url};
    for (size_t i = 0; i < 2; i++)
        if (urls[i] && strncmp(urls[i], "https://", 8) != 0 && strncmp(urls[i], "http://", 7) != 0)
            return hr_usage_error(prog, &hr_verify_command, "\"%s\": not an http(s) URL", urls[i]);
    hr_err gerr;
    if (hr_kcurl_global_init(&gerr) != HR_OK) {
        fprintf(stderr, "%s verify: %s\n", prog, gerr.msg);
        return HR_EXIT_INPUT;
    }

    /* config first: the webhook check needs to know whether it is live. */
    static const check_fn checks[] = {check_config, check_metrics, check_webhook};
    static const char *const tag[] = {"PASS", "FAIL", "SKIP"};
    int64_t deadline = hr_mono_ms() + v.timeout_ms;
    int fails = 0;
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        char msg[1024];
        int verdict;
        while ((verdict = checks[i](&v, msg, sizeof msg)) == V_FAIL && hr_mono_ms() < deadline) {
            fprintf(stderr, "(again in %d s) %s\n", RETRY_MS / 1000, msg);
            usleep(RETRY_MS * 1000);
        }
        /* A line lost on a closed stdout is no reason to fail the check: the exit status says it. */
        printf("%s  %s\n", tag[verdict], msg);
        HR_IGNORE(fflush(stdout));
        fails += verdict == V_FAIL;
    }
    curl_global_cleanup();
    return fails ? HR_EXIT_INPUT : HR_EXIT_OK;
}
