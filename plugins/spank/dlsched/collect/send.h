/*****************************************************************************\
 *  send.h - delivery of spooled batches to dlsched-ingestd (doc/protocol.md,
 *  "Delivery"): oldest first, one at a time, each attempt with a fresh munge
 *  credential whose payload is the batch (POST /v1/records, Content-Type
 *  application/x-munge).
 *
 *  Answers: 2xx deletes the batch; 400, 403 and 413 move it to rejected/ with
 *  the answer beside it (sending it again cannot help); anything else (no
 *  connection, a timeout, 401, 404, 429, 503, ...) puts it back and waits 1 s,
 *  doubling up to 60 s, or the answer's Retry-After if longer, before the
 *  next attempt. A 401 is retried because a credential
 *  can be refused for a passing reason (munged restarted, clocks being set);
 *  a site whose keys differ sees it in collect.log and keeps the batches.
 *
 *  Transfers run in libcurl's multi interface: the caller's loop never waits
 *  on the network (sender_poll() waits on the transfer and the caller's own
 *  descriptors together).
\*****************************************************************************/

#ifndef DLSCHED_COLLECT_SEND_H
#define DLSCHED_COLLECT_SEND_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>
#include <munge.h>

#include "spool.h"

#define SEND_BACKOFF_MIN_S 1.0
#define SEND_BACKOFF_MAX_S 60.0

typedef struct {
	spool_t *spool;
	char *url;
	munge_ctx_t munge;
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;

	char *name; /* the batch in flight (claimed), or NULL */
	char *cred;
	char answer[4096];
	size_t answer_len;
	long connect_ms, total_ms;

	char **queue; /* batches to send, oldest first */
	size_t qlen, qpos;
	double rescan_at; /* monotonic seconds */

	double backoff_s;     /* 0 while deliveries succeed */
	double retry_after_s; /* the last answer's Retry-After (0: none) */
	double retry_at;      /* monotonic: no attempt before */
	double failing_logged_at;
	unsigned long failures_in_row;

	unsigned long delivered, rejected, failed_attempts;
} sender_t;

extern int sender_init(sender_t *s, spool_t *spool, const char *ingest_url, const char *munge_socket, char *err,
		       size_t errlen);
extern void sender_fini(sender_t *s);

/* Lists the batches already waiting in the spool (left by earlier steps):
 * they go first. */
extern void sender_scan(sender_t *s, double now);

/* A batch this collector just wrote (sent after those already queued). */
extern void sender_add(sender_t *s, const char *name);

/* Finishes transfers that are done and starts the next one when it is due
 * (now: monotonic seconds); now_attempt ignores the back-off once. */
extern void sender_run(sender_t *s, double now, bool now_attempt);

/* Milliseconds until sender_run() has something to start (0: now), -1 if
 * nothing is waiting or a transfer is in flight. */
extern long sender_due_ms(sender_t *s, double now);

/* Waits up to timeout_ms for the transfer or one of extra's descriptors. */
extern void sender_poll(sender_t *s, struct curl_waitfd *extra, unsigned nextra, int timeout_ms);

extern bool sender_busy(const sender_t *s);
/* Whether batches are waiting (in the queue, beside one in flight). */
extern bool sender_waiting(const sender_t *s);
/* The limit of one attempt (connect: 2 s at most). */
extern void sender_set_timeout(sender_t *s, long total_ms);
/* Abandons the transfer in flight; its batch waits for the next collector. */
extern void sender_abort(sender_t *s);

#endif
