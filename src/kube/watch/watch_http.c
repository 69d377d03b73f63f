/*
 * watch_http.c — binds the watch state machine (watch.c) to the real
 * Kubernetes client (client.h). Kept apart from watch.c so that programs
 * driving a watch with another transport (the unit tests, the fuzz target)
 * do not pull the libcurl client into their link.
 */
#include "kube/watch/watch_http.h"

#include "kube/transport/backoff.h"
#include "kube/transport/linesplit.h"

/* The client's lines come from linesplit.c: writable, zero-padded. */
_Static_assert(HR_KLINE_PAD >= YYJSON_PADDING_SIZE, "watch lines must be parseable in place");

static hr_status kc_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return hr_kclient_do(ud, "GET", path, NULL, NULL, 0, resp, res, err);
}

static hr_status kc_stream(void *ud, const char *path, long timeout_s, hr_kline_fn on_line,
                           void *line_ud, const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    return hr_kclient_stream(ud, path, timeout_s, on_line, line_ud, stop, res, err);
}

static hr_status kc_get_as(void *ud, const char *path, const char *accept, hr_buf *resp,
                           hr_kresult *res, hr_err *err)
{
    return hr_kclient_get_as(ud, path, accept, resp, res, err);
}

static hr_status kc_stream_as(void *ud, const char *path, const char *accept, long timeout_s,
                              hr_kline_fn on_line, hr_kline_fn on_frame, void *line_ud,
                              const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    return hr_kclient_stream_as(ud, path, accept, timeout_s, on_line, on_frame, line_ud, stop, res,
                                err);
}

static void kc_wake(void *ud)
{
    hr_kclient_wake_streams(ud);
}

hr_wtransport hr_watch_transport_kclient(hr_kclient *c)
{
    return (hr_wtransport){c,    kc_get,  kc_stream, hr_kbackoff_ms,
                           true, kc_wake, kc_get_as, kc_stream_as};
}
