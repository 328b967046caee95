/*
 * Wake-up latency of a blocked thread on another CPU (issue 4, ping RTT):
 * thread B, pinned to CPU 1, waits for an eventfd (blocking in epoll_wait,
 * optionally after spinning SPIN_US, or busy-polling in mode 2); thread A,
 * pinned to CPU 0, writes the eventfd every INTERVAL_US and B records how
 * long after the write it ran. Prints p10/p50/p90/p99 in microseconds.
 *
 *   gcc -O2 -pthread -o /tmp/wake_latency scripts/wake_latency.c
 *   /tmp/wake_latency MODE SPIN_US INTERVAL_US N
 *     MODE 0: block at once; 1: spin SPIN_US, then block; 2: busy-poll
 *
 * Measured on the 2-vCPU Firecracker guest (2026-11-24, another engineer's
 * builds running): mode 0 at 10 ms 34 us median (24 p10, 54 p90); at 1 ms
 * 17 us; at 100 us 12 us; mode 2 2 us.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int efd, ep, n = 300, mode;
static long interval_us = 10000, spin_us;
static volatile uint64_t sent_ns;
static uint64_t lat[100000];

static uint64_t now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *waiter(void *arg)
{
	struct epoll_event ev;
	uint64_t v = 0;
	(void)arg;
	pin(1);
	for (int i = 0; i < n;) {
		int got = 0;
		if (mode == 2) {
			while (read(efd, &v, 8) != 8)
				;
			got = 1;
		} else {
			uint64_t st = now();
			while (now() - st < (uint64_t)spin_us * 1000)
				if (read(efd, &v, 8) == 8) {
					got = 1;
					break;
				}
		}
		if (!got) {
			epoll_wait(ep, &ev, 1, -1);
			if (read(efd, &v, 8) != 8)
				continue;
		}
		uint64_t d = now() - sent_ns;
		/* v > 1: writes coalesced; count each once */
		for (uint64_t k = 0; k < v && i < n; k++)
			lat[i++] = d;
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc > 1) mode = atoi(argv[1]);
	if (argc > 2) spin_us = atol(argv[2]);
	if (argc > 3) interval_us = atol(argv[3]);
	if (argc > 4) n = atoi(argv[4]);
	if (n < 10 || n > 100000) n = 300;
	efd = eventfd(0, EFD_NONBLOCK);
	ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &e);
	pthread_t t;
	pthread_create(&t, NULL, waiter, NULL);
	pin(0);
	usleep(20000);
	for (int i = 0; i < n; i++) {
		usleep(interval_us);
		sent_ns = now();
		uint64_t one = 1;
		if (write(efd, &one, 8) != 8)
			return 1;
	}
	pthread_join(t, NULL);
	qsort(lat, n, sizeof lat[0], cmp);
	printf("mode=%d spin=%ldus interval=%ldus: p10 %.1f p50 %.1f p90 %.1f p99 %.1f us\n",
	       mode, spin_us, interval_us, lat[n / 10] / 1e3, lat[n / 2] / 1e3,
	       lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3);
	return 0;
}
