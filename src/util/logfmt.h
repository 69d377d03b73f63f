/*
 * logfmt.h — one log line as logfmt or as JSON (design §9: "logfmt or JSON
 * by flag").
 *
 * Every component logs one preformatted logfmt fragment
 * (`msg="limit applied" pod=a/b from=0m to=2000m`); how the line finally
 * looks is the daemon's choice. For JSON the fragment is parsed back into
 * its pairs — keys, bare values and double-quoted values with backslash
 * escapes — and written as one object, so operators' log pipelines get
 * structured fields without every call site knowing about JSON.
 */
#ifndef HR_UTIL_LOGFMT_H
#define HR_UTIL_LOGFMT_H

#include "buf.h"

/* {"time":…,"level":…, then the fragment's pairs}. A fragment that does not
 * parse as logfmt is kept whole under "msg". Ends with a newline. */
void hr_log_json(hr_buf *out, const char *time, const char *level, const char *fragment);

#endif
