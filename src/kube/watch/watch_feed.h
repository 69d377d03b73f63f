/*
 * watch_feed.h — what arrives on a watch, into its sink: one event (a JSON
 * line or a protobuf frame) or one list page, and the framing of a relist.
 * The loop (watch.c) calls these as bytes come; they are exposed for the
 * unit tests, the fuzz targets and the benchmarks, which feed a watch
 * without a server.
 */
#ifndef HR_KUBE_WATCH_FEED_H
#define HR_KUBE_WATCH_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/watch/watch.h"

typedef enum hr_wline {
    HR_WL_OK = 0, /* handled (or skipped as malformed): keep reading */
    HR_WL_GONE,   /* ERROR 410: the resourceVersion is too old, relist */
    HR_WL_ERROR,  /* another ERROR event: reconnect after back-off */
    HR_WL_BAD,    /* the line is not a watch event: reconnect */
} hr_wline;

/* One line of a watch stream (without its newline). Feeding lines from
 * outside the loop is a watch past its list: ADDED events are changes. */
hr_wline hr_watch_feed_line(hr_watch *w, const char *line, size_t len);

/* The same, parsing in place: line is modified, and line[len] up to
 * line[len + YYJSON_PADDING_SIZE) must be readable zero bytes. */
hr_wline hr_watch_feed_line_mut(hr_watch *w, char *line, size_t len);

/* One frame of a protobuf watch stream (without its 4-byte length):
 * the same as a line, for a stream whose Content-Type is protobuf. */
hr_wline hr_watch_feed_frame(hr_watch *w, const uint8_t *frame, size_t len);

/* One page of a list response. *cont receives the continue token (""
 * when this was the last page). Objects go to the sink's upsert. */
HR_MUST_CHECK hr_status hr_watch_feed_page(hr_watch *w, const char *body, size_t len, char *cont,
                                           size_t cont_cap, hr_err *err);

/* The same for a page in protobuf (a body: "k8s\0" + Unknown of a List). */
HR_MUST_CHECK hr_status hr_watch_feed_page_pb(hr_watch *w, const uint8_t *body, size_t len,
                                              char *cont, size_t cont_cap, hr_err *err);

/* Frame a relist from outside (tests). */
void hr_watch_relist_begin(hr_watch *w);
void hr_watch_relist_end(hr_watch *w, bool complete);

#endif
