/*****************************************************************************\
 *  send.c - munge + libcurl delivery of spooled batches (send.h).
\*****************************************************************************/

#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "send.h"

#define RESCAN_S 30.0
#define FAILURE_LOG_EVERY_S 60.0

/* The answer without its trailing newlines, for the log. */
static const char *_answer_line(sender_t *s)
{
	while (s->answer_len && (s->answer[s->answer_len - 1] == '\n' || s->answer[s->answer_len - 1] == '\r'))
		s->answer[--s->answer_len] = '\0';
	return s->answer;
}

/* Retry-After: seconds (429, 503); an HTTP date is not sent by dlsched-ingestd. */
static size_t _on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	sender_t *s = arg;
	size_t n = size * nmemb;

	if (n > 12 && !strncasecmp(data, "Retry-After:", 12)) {
		char buf[32];
		size_t k = n - 12 < sizeof(buf) - 1 ? n - 12 : sizeof(buf) - 1;
		long v;

		memcpy(buf, data + 12, k);
		buf[k] = '\0';
		v = strtol(buf, NULL, 10);
		if (v > 0)
			s->retry_after_s = v > 3600 ? 3600 : v;
	}
	return n;
}

static size_t _on_answer(char *data, size_t size, size_t nmemb, void *arg)
{
	sender_t *s = arg;
	size_t n = size * nmemb, room = sizeof(s->answer) - 1 - s->answer_len;

	memcpy(s->answer + s->answer_len, data, n < room ? n : room);
	s->answer_len += n < room ? n : room;
	s->answer[s->answer_len] = '\0';
	return n;
}

extern int sender_init(sender_t *s, spool_t *spool, const char *ingest_url, const char *munge_socket, char *err,
		       size_t errlen)
{
	size_t n = strlen(ingest_url);

	memset(s, 0, sizeof(*s));
	s->spool = spool;
	s->connect_ms = 2000;
	s->total_ms = 5000;
	while (n && ingest_url[n - 1] == '/')
		n--;
	if (asprintf(&s->url, "%.*s/v1/records", (int) n, ingest_url) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!(s->munge = munge_ctx_create())) {
		snprintf(err, errlen, "munge_ctx_create failed (out of memory)");
		return -1;
	}
	if (munge_socket && munge_socket[0] &&
	    munge_ctx_set(s->munge, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS) {
		snprintf(err, errlen, "munge socket %s: %s", munge_socket, munge_ctx_strerror(s->munge));
		return -1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(s->multi = curl_multi_init()) ||
	    !(s->easy = curl_easy_init())) {
		snprintf(err, errlen, "libcurl failed to start");
		return -1;
	}
	s->headers = curl_slist_append(NULL, "Content-Type: application/x-munge");
	s->headers = curl_slist_append(s->headers, "Expect:");
	return 0;
}

static void _drop_queue(sender_t *s)
{
	spool_free_names(s->queue, s->qlen);
	s->queue = NULL;
	s->qlen = s->qpos = 0;
}

extern void sender_abort(sender_t *s)
{
	if (!s->name)
		return;
	curl_multi_remove_handle(s->multi, s->easy);
	if (spool_unclaim(s->spool, s->name) < 0)
		collect_log("cannot put back %s: %s", s->name, strerror(errno));
	free(s->name);
	s->name = NULL;
	free(s->cred);
	s->cred = NULL;
}

extern void sender_fini(sender_t *s)
{
	sender_abort(s);
	_drop_queue(s);
	if (s->easy)
		curl_easy_cleanup(s->easy);
	if (s->multi)
		curl_multi_cleanup(s->multi);
	curl_slist_free_all(s->headers);
	if (s->munge)
		munge_ctx_destroy(s->munge);
	free(s->url);
	memset(s, 0, sizeof(*s));
}

extern void sender_add(sender_t *s, const char *name)
{
	char **q = realloc(s->queue, (s->qlen + 1) * sizeof(*q));

	if (!q)
		return; /* found again by the next scan */
	s->queue = q;
	if ((s->queue[s->qlen] = strdup(name)))
		s->qlen++;
}

extern void sender_set_timeout(sender_t *s, long total_ms)
{
	s->total_ms = total_ms < 1 ? 1 : total_ms;
	s->connect_ms = s->total_ms < 2000 ? s->total_ms : 2000;
}

extern bool sender_busy(const sender_t *s)
{
	return s->name != NULL;
}

extern bool sender_waiting(const sender_t *s)
{
	return s->qpos < s->qlen;
}

static unsigned long _waiting_count(const sender_t *s)
{
	return (unsigned long) (s->qlen - s->qpos);
}

/* A retryable failure: put the batch back, wait longer (at least what the
 * service's Retry-After said). */
static void _retry_later(sender_t *s, double now, const char *why)
{
	s->backoff_s = s->backoff_s ? s->backoff_s * 2 : SEND_BACKOFF_MIN_S;
	if (s->backoff_s > SEND_BACKOFF_MAX_S)
		s->backoff_s = SEND_BACKOFF_MAX_S;
	if (s->retry_after_s > s->backoff_s)
		s->backoff_s = s->retry_after_s;
	s->retry_at = now + s->backoff_s;
	s->failed_attempts++;
	if (!s->failures_in_row++ || now - s->failing_logged_at >= FAILURE_LOG_EVERY_S) {
		collect_log("cannot deliver %s to %s: %s; kept in the spool (%lu waiting), next attempt in %.0f s",
			    s->name ? s->name : "a batch", s->url, why, _waiting_count(s), s->backoff_s);
		s->failing_logged_at = now;
	}
}

static void _succeeded(sender_t *s)
{
	if (s->failures_in_row)
		collect_log("delivering to %s again after %lu failed attempts", s->url, s->failures_in_row);
	s->failures_in_row = 0;
	s->backoff_s = 0;
	s->retry_at = 0;
}

/* The transfer in flight ended. */
static void _finish(sender_t *s, CURLcode result, double now)
{
	long code = 0;
	char why[4200];

	curl_multi_remove_handle(s->multi, s->easy);
	free(s->cred);
	s->cred = NULL;
	if (result != CURLE_OK) {
		snprintf(why, sizeof(why), "%s", curl_easy_strerror(result));
		if (spool_unclaim(s->spool, s->name) < 0)
			collect_log("cannot put back %s: %s", s->name, strerror(errno));
		_retry_later(s, now, why);
		goto done;
	}
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		spool_delete_claimed(s->spool, s->name);
		s->delivered++;
		s->qpos++;
		_succeeded(s);
	} else if (code == 400 || code == 403 || code == 413) {
		/* Only these say the batch itself is refused for good; everything
		 * else (no connection, 401, 404, 429, 5xx) is retried. */
		char answer[4200];
		int n = snprintf(answer, sizeof(answer), "HTTP %ld\n%s\n", code, _answer_line(s));

		collect_log("%s refused %s with HTTP %ld: %s; moved to %s", s->url, s->name, code, s->answer,
			    s->spool->rejected);
		if (spool_reject_claimed(s->spool, s->name, answer, n < 0 ? 0 : (size_t) n) < 0)
			(void) spool_unclaim(s->spool, s->name);
		s->rejected++;
		s->qpos++;
		_succeeded(s); /* the service answers: no reason to wait */
	} else {
		snprintf(why, sizeof(why), "HTTP %ld %s", code, _answer_line(s));
		if (spool_unclaim(s->spool, s->name) < 0)
			collect_log("cannot put back %s: %s", s->name, strerror(errno));
		_retry_later(s, now, why);
	}
done:
	free(s->name);
	s->name = NULL;
}

extern void sender_scan(sender_t *s, double now)
{
	_drop_queue(s);
	s->rescan_at = now + RESCAN_S;
	(void) spool_scan(s->spool, &s->queue, &s->qlen);
}

/* The next batch to send, claimed; -1 when none is waiting. */
static int _claim_next(sender_t *s, double now)
{
	while (s->qpos < s->qlen) {
		if (spool_claim(s->spool, s->queue[s->qpos]) == 0)
			return 0;
		s->qpos++; /* another collector took it, or it is gone */
	}
	if (now < s->rescan_at)
		return -1;
	sender_scan(s, now);
	while (s->qpos < s->qlen) {
		if (spool_claim(s->spool, s->queue[s->qpos]) == 0)
			return 0;
		s->qpos++;
	}
	return -1;
}

static void _start(sender_t *s, double now)
{
	const char *name;
	char *batch, *why = NULL;
	size_t len = 0;
	munge_err_t merr;

	if (_claim_next(s, now) < 0)
		return;
	name = s->queue[s->qpos];
	if (!(s->name = strdup(name))) {
		(void) spool_unclaim(s->spool, name);
		return;
	}
	if (!(batch = spool_read_claimed(s->spool, name, &len))) {
		collect_log("cannot read %s from the spool: %s; skipped", name, strerror(errno));
		(void) spool_unclaim(s->spool, name);
		free(s->name);
		s->name = NULL;
		s->qpos++;
		return;
	}
	merr = munge_encode(&s->cred, s->munge, batch, (int) len);
	free(batch);
	if (merr != EMUNGE_SUCCESS) {
		if (asprintf(&why, "munge: %s (is munged running, and is munge_socket= in plugstack.conf its socket?)",
			     munge_ctx_strerror(s->munge)) < 0)
			why = NULL;
		if (spool_unclaim(s->spool, s->name) < 0)
			collect_log("cannot put back %s: %s", s->name, strerror(errno));
		_retry_later(s, now, why ? why : "munge failed");
		free(why);
		free(s->cred);
		s->cred = NULL;
		free(s->name);
		s->name = NULL;
		return;
	}
	s->answer_len = 0;
	s->answer[0] = '\0';
	s->retry_after_s = 0;
	curl_easy_reset(s->easy);
	curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
	curl_easy_setopt(s->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->cred);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long) strlen(s->cred));
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, _on_answer);
	curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_HEADERFUNCTION, _on_header);
	curl_easy_setopt(s->easy, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, s->connect_ms);
	curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, s->total_ms);
	curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->easy, CURLOPT_USERAGENT, "dlsched-collect/1");
	curl_multi_add_handle(s->multi, s->easy);
}

extern void sender_run(sender_t *s, double now, bool now_attempt)
{
	int running = 0, left = 0;
	CURLMsg *msg;

	for (int round = 0; round < 2; round++) {
		curl_multi_perform(s->multi, &running);
		while ((msg = curl_multi_info_read(s->multi, &left))) {
			if (msg->msg == CURLMSG_DONE && s->name)
				_finish(s, msg->data.result, now);
		}
		if (s->name || (!now_attempt && now < s->retry_at))
			return;
		now_attempt = false;
		_start(s, now);
		if (!s->name)
			return;
	}
}

extern long sender_due_ms(sender_t *s, double now)
{
	if (s->name)
		return -1;
	if (s->qpos >= s->qlen && now < s->rescan_at)
		return -1;
	if (now >= s->retry_at)
		return 0;
	return (long) ((s->retry_at - now) * 1000) + 1;
}

extern void sender_poll(sender_t *s, struct curl_waitfd *extra, unsigned nextra, int timeout_ms)
{
	int numfds = 0;

	curl_multi_poll(s->multi, extra, nextra, timeout_ms < 0 ? 0 : timeout_ms, &numfds);
}
