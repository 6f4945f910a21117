/* What a member asks of a container engine over its API socket: Docker's
 * Engine API and Podman's (its Docker-compatible API and its libpod API)
 * are HTTP/1.1 requests, `POST /v1.43/containers/hermes/kill`,
 * `DELETE /v4.3.1/libpod/containers/<id>?force=true`. The engine, outside
 * every session, has the OCI runtime send the signal; the kernel never
 * sees the member behind it. So the request line is read here, at the
 * start of each write to the socket, and a request that changes a guarded
 * container (lg_engine_refs: its names, id and id prefixes) is refused:
 * removing it, and every POST but those that leave it running as it is
 * (wait, resize, start, unpause, init, healthcheck). Everything else on
 * the socket (reading, other containers, images, creating and running
 * new containers) is left alone.
 *
 * Limits, by design of a check that reads one write: a request line cut
 * over several writes, or one that follows a body in the same write
 * (pipelining), a splice or sendfile into the socket, and an engine
 * reached over TCP or TLS are not read. The clients (the docker and
 * podman CLIs, docker-py, the testcontainers libraries, curl) write the
 * request line and headers in one write at its start. */
#ifndef LG_BPF_ENGINE_REQUEST_H
#define LG_BPF_ENGINE_REQUEST_H

#include "bus_message.h"

#define LG_ENGINE_ACTION_LEN 16
/* The longest ref read past when it is longer than the key. */
#define LG_ENGINE_REF_SKIP 192

enum lg_engine_method {
	LG_ENGINE_POST = 1,
	LG_ENGINE_PUT = 2,
	LG_ENGINE_DELETE = 3,
};

/* The scan's state, in map memory: the verifier checks each bpf_loop
 * callback once, and reads these as unknown there (on the stack, their
 * first values would be taken for all), and the code after each scan
 * once, not once per length the scan could have stopped at. */
struct lg_engine_scan {
	__u32 at;
	__u32 have;
	__u32 n;
	__u32 odd; /* a '%' in the ref: an encoding the engine would undo */
	struct lg_engine_ref key;
	char action[LG_ENGINE_ACTION_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_engine_scan);
} lg_engine_scratch __weak SEC(".maps");

struct lg_engine_ctx {
	const unsigned char *b;
	struct lg_engine_scan *s;
};

static __always_inline unsigned char engine_byte(const unsigned char *b, __u32 at)
{
	return b[at & (LG_BUS_READ - 1)];
}

static __always_inline bool engine_segment_end(unsigned char c)
{
	return c == '/' || c == '?' || c == ' ' || c == '#' || c == '\r' || c == '\n' || c == 0;
}

/* An API version (/v1.43, /v4.3.1; the engines take letters and dashes
 * there too). */
static long engine_version_byte(__u32 i, struct lg_engine_ctx *x)
{
	struct lg_engine_scan *s = x->s;
	unsigned char c;

	if (s->at >= s->have)
		return 1;
	c = engine_byte(x->b, s->at);
	if ((c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && c != '.' && c != '-')
		return 1;
	s->at++;
	return 0;
}

/* "force" anywhere in the request target (a query's force=true). */
static long engine_force_byte(__u32 i, struct lg_engine_ctx *x)
{
	struct lg_engine_scan *s = x->s;
	unsigned char c;

	if (s->at >= s->have)
		return 1;
	c = engine_byte(x->b, s->at);
	if (c == ' ' || c == '\r' || c == '\n')
		return 1;
	if (bus_has(x->b, s->at, s->have, "force", 5)) {
		s->odd = 1;
		return 1;
	}
	s->at++;
	return 0;
}

/* One segment of the path: its first LG_ENGINE_REF_LEN bytes into the
 * key, the rest read past. */
static long engine_ref_byte(__u32 i, struct lg_engine_ctx *x)
{
	struct lg_engine_scan *s = x->s;
	unsigned char c;

	if (s->at >= s->have)
		return 1;
	c = engine_byte(x->b, s->at);
	if (engine_segment_end(c))
		return 1;
	if (c == '%')
		s->odd = 1;
	if (s->n < LG_ENGINE_REF_LEN)
		s->key.ref[s->n & (LG_ENGINE_REF_LEN - 1)] = c;
	s->n++;
	s->at++;
	return 0;
}

static long engine_action_byte(__u32 i, struct lg_engine_ctx *x)
{
	struct lg_engine_scan *s = x->s;
	unsigned char c;

	if (s->at >= s->have)
		return 1;
	c = engine_byte(x->b, s->at);
	if (engine_segment_end(c) || s->n >= LG_ENGINE_ACTION_LEN - 1)
		return 1;
	s->action[s->n & (LG_ENGINE_ACTION_LEN - 1)] = c;
	s->n++;
	s->at++;
	return 0;
}

static __always_inline bool engine_word_is(const char *a, const char *want, __u32 len)
{
	for (__u32 i = 0; i < len && i < LG_ENGINE_ACTION_LEN - 1; i++)
		if (a[i] != want[i])
			return false;
	return !a[len & (LG_ENGINE_ACTION_LEN - 1)];
}

/* The action segment (NUL-terminated), as enum lg_engine_action, or 0
 * for one that leaves the container running as it is. */
static __always_inline __u32 engine_post_action(const char *a)
{
	if (engine_word_is(a, "wait", 4) || engine_word_is(a, "resize", 6) || engine_word_is(a, "start", 5) ||
	    engine_word_is(a, "unpause", 7) || engine_word_is(a, "init", 4) || engine_word_is(a, "healthcheck", 11))
		return 0;
	if (engine_word_is(a, "kill", 4))
		return LG_ENGINE_KILL;
	if (engine_word_is(a, "stop", 4))
		return LG_ENGINE_STOP;
	if (engine_word_is(a, "restart", 7))
		return LG_ENGINE_RESTART;
	if (engine_word_is(a, "pause", 5))
		return LG_ENGINE_PAUSE;
	if (engine_word_is(a, "update", 6))
		return LG_ENGINE_UPDATE;
	if (engine_word_is(a, "exec", 4))
		return LG_ENGINE_EXEC;
	if (engine_word_is(a, "attach", 6))
		return LG_ENGINE_ATTACH;
	if (engine_word_is(a, "rename", 6))
		return LG_ENGINE_RENAME;
	return LG_ENGINE_OTHER;
}

static __always_inline bool engine_ref_listed(struct lg_engine_scan *s, char c)
{
	__builtin_memset(&s->key, 0, sizeof(s->key));
	s->key.ref[0] = c;
	return bpf_map_lookup_elem(&lg_engine_refs, &s->key);
}

/* A request that may change a container (or the pod, image, volume or
 * network one runs with) but cannot be read to the end here: refused
 * while any container is guarded (the watcher's "#"), never guessed. */
static __always_inline __u32 engine_unreadable(struct lg_engine_scan *s)
{
	return engine_ref_listed(s, '#') ? LG_ENGINE_OTHER : 0;
}

/* enum lg_engine_action of a write that asks the engine to change a
 * guarded container, or 0. A call of its own: its stack and the scan
 * callbacks' come on top of the hook's, not inside it. */
static __noinline __u32 engine_request_verdict(struct msghdr *msg)
{
	struct lg_bus_write w;
	__u32 zero = 0;
	struct lg_bus_buf *buf = bpf_map_lookup_elem(&lg_bus_scratch, &zero);
	struct lg_engine_scan *s = bpf_map_lookup_elem(&lg_engine_scratch, &zero);

	/* Only the start of the write is read: more iovecs than
	 * bus_write_segments follows are no reason to look away from it. */
	bus_write_segments(msg, &w);
	if (!buf || !s || !w.segments)
		return 0;
	__u32 have = bus_read_at(&w, 0, buf);
	const unsigned char *b = buf->c;
	struct lg_engine_ctx x = {.b = b, .s = s};
	__u32 method;

	__builtin_memset(s, 0, sizeof(*s));
	s->have = have;
	if (bus_has(b, 0, have, "POST ", 5)) {
		method = LG_ENGINE_POST;
		s->at = 5;
	} else if (bus_has(b, 0, have, "PUT ", 4)) {
		method = LG_ENGINE_PUT;
		s->at = 4;
	} else if (bus_has(b, 0, have, "DELETE ", 7)) {
		method = LG_ENGINE_DELETE;
		s->at = 7;
	} else {
		return 0;
	}
	/* The clients write the path alone (origin form); a full URL is
	 * what only a deliberate request sends to a socket. */
	if (!bus_has(b, s->at, have, "/", 1))
		return engine_unreadable(s);
	/* The API version is optional. */
	if (bus_has(b, s->at, have, "/v", 2) && s->at + 2 < have && engine_byte(b, s->at + 2) >= '0' &&
	    engine_byte(b, s->at + 2) <= '9') {
		s->at += 2;
		bpf_loop(64, engine_version_byte, &x, 0);
		if (!bus_has(b, s->at, have, "/", 1))
			return engine_unreadable(s);
	}
	if (bus_has(b, s->at, have, "/libpod", 7))
		s->at += 7;
	/* Podman stops and removes a pod's containers with it. */
	bool pod = bus_has(b, s->at, have, "/pods/", 6);

	if (pod)
		s->at += 6;
	else if (bus_has(b, s->at, have, "/containers/", 12))
		s->at += 12;
	else if (method != LG_ENGINE_DELETE)
		return 0;
	else {
		/* Podman's forced removal of an image, volume or network
		 * removes the containers that use it; play/kube its pods. */
		if (bus_has(b, s->at, have, "/play/kube", 10))
			return engine_unreadable(s) ? LG_ENGINE_REMOVE : 0;
		bpf_loop(LG_BUS_READ, engine_force_byte, &x, 0);
		return s->odd && engine_unreadable(s) ? LG_ENGINE_REMOVE : 0;
	}
	bpf_loop(LG_ENGINE_REF_LEN + LG_ENGINE_REF_SKIP, engine_ref_byte, &x, 0);
	/* Cut short by the end of what was read (a request split over
	 * writes or iovecs), or encoded: not the name the engine will see. */
	if (s->at >= have || s->odd)
		return engine_unreadable(s);
	if (!s->n)
		return 0;
	/* Creating, pruning and listing name no container (POST
	 * /containers/create?name=...): a change of one always has an
	 * action segment, or is a DELETE or PUT. */
	bool action = engine_byte(b, s->at) == '/';

	if (method == LG_ENGINE_POST && !action)
		return 0;
	__u32 verdict = LG_ENGINE_OTHER;

	if (method == LG_ENGINE_DELETE) {
		verdict = LG_ENGINE_REMOVE;
	} else if (method == LG_ENGINE_PUT) {
		verdict = LG_ENGINE_ARCHIVE;
	} else {
		s->at++;
		s->n = 0;
		bpf_loop(LG_ENGINE_ACTION_LEN, engine_action_byte, &x, 0);
		if (s->at >= have)
			return engine_unreadable(s);
		verdict = engine_post_action(s->action);
		if (!verdict)
			return 0;
	}
	/* A pod is refused while any container is guarded: its members are
	 * not listed here. */
	if (pod)
		return engine_unreadable(s) ? verdict : 0;
	if (bpf_map_lookup_elem(&lg_engine_refs, &s->key) || engine_ref_listed(s, '*'))
		return verdict;
	return 0;
}

#endif
