/* serve's Host names (DNS rebinding) and its front door (slow clients), without HTTP. */
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "serve/serve_accept.h"
#include "serve/serve_host.h"

Test(serve_host, own_names_only)
{
	static const char *const names[] = { "pyebpf.example" };
	struct serve_hosts h = { .listen = "127.0.0.1", .port = 8080, .names = names, .nnames = 1 };
	static const char *const good[] = { "127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080",
					    "pyebpf.example:8080" };
	static const char *const bad[] = { "evil.example:8080",
					   "127.0.0.1.evil.example:8080",
					   "localhost:80801",
					   "localhost",
					   "localhost.:8080",
					   "pyebpf.example.evil:8080",
					   "10.0.0.1:8080",
					   "localhost:8080:8080",
					   "[::1]8080",
					   "",
					   ":8080",
					   "localhost:",
					   "localhost:+80",
					   "[::1",
					   "localhost:08080x" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert(serve_host__allowed(&h, good[i]), "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(!serve_host__allowed(&h, bad[i]), "%s", bad[i]);
	cr_assert(!serve_host__allowed(&h, NULL));
	/* On port 80 a Host may leave the port out. */
	h.port = 80;
	cr_assert(serve_host__allowed(&h, "localhost"));
	cr_assert(serve_host__allowed(&h, "localhost:80"));
	/* Listening on every address: any address literal (none can be rebound), still no other name. */
	h = (struct serve_hosts){ .listen = "0.0.0.0", .any = true, .port = 8080 };
	cr_assert(serve_host__allowed(&h, "192.168.1.5:8080"));
	cr_assert(serve_host__allowed(&h, "[fe80::1]:8080"));
	cr_assert(!serve_host__allowed(&h, "myhost:8080"));
	cr_assert(!serve_host__allowed(&h, "192.168.1.5.nip.io:8080"));
}

/* ---- the front door ---- */

struct handed {
	pthread_mutex_t lock;
	int fds[64];
	int n;
};

static void take(void *ctx, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct handed *h = ctx;

	(void)addr;
	(void)len;
	pthread_mutex_lock(&h->lock);
	h->fds[h->n++] = fd;
	pthread_mutex_unlock(&h->lock);
}

static int listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) && !listen(fd, 64) &&
		  !getsockname(fd, (struct sockaddr *)&a, &len));
	*port = ntohs(a.sin_port);
	return fd;
}

static int client(int port, const char *send_first)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)));
	if (send_first)
		cr_assert_eq(write(fd, send_first, strlen(send_first)), (ssize_t)strlen(send_first));
	return fd;
}

static int handed_count(struct handed *h)
{
	int n;

	pthread_mutex_lock(&h->lock);
	n = h->n;
	pthread_mutex_unlock(&h->lock);
	return n;
}

static void wait_handed(struct handed *h, int n, double s)
{
	for (int i = 0; i < (int)(s * 100) && handed_count(h) < n; i++)
		usleep(10000);
	cr_assert_eq(handed_count(h), n);
}

/* What the server sent before closing (up to 511 bytes). */
static void read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
}

Test(serve_accept, complete_requests_only_and_a_deadline_from_accept)
{
	struct handed h = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct serve_accept_opts o = { .max_waiting = 4, .deadline_ms = 600, .max_header = 64 };
	int port, lfd = listener(&port), slow, big, quick;
	struct serve_accept *s = serve_accept__start(lfd, &o, take, &h);
	char buf[512];

	cr_assert_not_null(s);
	/* Headers in pieces: handed on at the blank line, not before. */
	slow = client(port, "GET / HTTP/1.1\r\n");
	usleep(100000);
	cr_assert_eq(handed_count(&h), 0);
	cr_assert_eq(write(slow, "Host: x\r\n\r\n", 11), 11);
	wait_handed(&h, 1, 2);
	/* Nothing was consumed: the server reads the whole request. */
	cr_assert_eq(recv(h.fds[0], buf, sizeof(buf), 0), 27);
	cr_assert_eq(memcmp(buf, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27), 0);
	close(h.fds[0]);
	close(slow);
	/* A line every 200 ms keeps no connection past its deadline. */
	slow = client(port, "GET / HTTP/1.1\r\n");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 6; i++) {
		usleep(200000);
		if (send(slow, "X: y\r\n", 6, MSG_NOSIGNAL) != 6)
			break;
	}
	read_all(slow, buf, sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert(strstr(buf, "HTTP/1.1 408 Request Timeout\r\n"), "%s", buf);
	cr_assert(strstr(buf, "\r\n\r\nthe request took too long to arrive\n"), "%s", buf);
	cr_assert(took > 0.5 && took < 1.2, "closed after %.2f s", took);
	close(slow);
	/* Headers beyond max_header: a 431. */
	big = client(port, "GET /AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\n");
	read_all(big, buf, sizeof(buf));
	cr_assert(strstr(buf, "HTTP/1.1 431 "), "%s", buf);
	close(big);
	/* Every slot taken by slow clients: the oldest makes room, a quick request gets through. */
	int slows[6];
	for (int i = 0; i < 6; i++)
		slows[i] = client(port, "GET / HTTP/1.1\r\n");
	usleep(100000);
	quick = client(port, "GET / HTTP/1.1\r\n\r\n");
	wait_handed(&h, 2, 0.3);
	close(h.fds[1]);
	close(quick);
	/* The first three were made to leave. */
	for (int i = 0; i < 3; i++) {
		read_all(slows[i], buf, sizeof(buf));
		cr_assert_str_eq(buf, "", "evicted without an answer");
	}
	for (int i = 0; i < 6; i++)
		close(slows[i]);
	serve_accept__stop(s);
	close(lfd);
}
