// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/backoff.h"

double backoff_delay(unsigned failures, double rand01)
{
	double d = BACKOFF_FIRST_S;

	for (unsigned i = 1; i < failures && d < BACKOFF_MAX_S; i++)
		d *= 2;
	if (d > BACKOFF_MAX_S)
		d = BACKOFF_MAX_S;
	if (!(rand01 >= 0) || rand01 >= 1)
		rand01 = 0;
	return d - d / 2 * rand01;
}

double backoff_wait(unsigned failures, double rand01, double retry_after_s)
{
	double d = backoff_delay(failures, rand01);

	if (retry_after_s > RETRY_AFTER_MAX_S)
		retry_after_s = RETRY_AFTER_MAX_S;
	return retry_after_s > d ? retry_after_s : d;
}

enum push_verdict push_verdict_of(long status)
{
	if (status >= 200 && status < 300)
		return PUSH_SENT;
	/* A redirect (http to https, a login page), a proxy wanting credentials,
	 * a wrong host: the setup, not the interval. */
	if ((status >= 300 && status < 400) || status == 401 || status == 403 || status == 404 || status == 405 ||
	    status == 407 || status == 421 || status == 501)
		return PUSH_SETUP;
	if (status == 408 || status == 429 || status >= 500 || status < 100)
		return PUSH_RETRY;
	return PUSH_REJECTED;
}

const char *push_verdict_name(enum push_verdict v)
{
	switch (v) {
	case PUSH_SENT:
		return "sent";
	case PUSH_RETRY:
		return "retry";
	case PUSH_SETUP:
		return "refused (credentials or URL)";
	case PUSH_REJECTED:
		return "rejected";
	}
	return "?";
}
