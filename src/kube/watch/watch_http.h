/*
 * watch_http.h — the watch's transport on the real Kubernetes client.
 *
 * A watch (kube/watch/watch.h) makes its requests through an
 * hr_wtransport; this one sends them with hr_kclient_do and
 * hr_kclient_stream and backs off with hr_kbackoff_ms. It has a file of its
 * own so that programs driving a watch with another transport (the unit
 * tests, the fuzz target) do not pull the libcurl client into their link.
 */
#ifndef HR_KUBE_WATCH_HTTP_H
#define HR_KUBE_WATCH_HTTP_H

#include "kube/transport/client.h"
#include "kube/watch/watch.h"

/* The real client. c must outlive every watch using the transport. */
hr_wtransport hr_watch_transport_kclient(hr_kclient *c);

#endif
