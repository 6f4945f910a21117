/* What a member writes to a D-Bus bus socket, read as the bus daemon will
 * read it: the authentication lines, then messages, whose headers say
 * which object a method call goes to and which method it calls.
 *
 * The bus itself stays open (suites talk to many services over it); what
 * is refused is a method call that changes the state of the machine's
 * managers, systemd (every object under /org/freedesktop/systemd1: start,
 * stop, kill, transient units as `systemd-run` makes them, properties) and
 * logind (power off, reboot, sessions), whichever bus name it is sent to.
 * Reading them is allowed: methods named Get*, List*, Lookup*, Dump*,
 * Can* (not Cancel*), (Un)Subscribe, Introspect, Ping.
 *
 * The hook runs before the kernel sends anything and never learns how
 * much went, so the door keeps no position in the stream, only its phase
 * (authentication until BEGIN, by socket, lg_bus_auth), and each write
 * must hold whole lines and whole messages: the libraries (sd-bus,
 * libdbus, GDBus, dbus-python, zbus) write a message in one call. A write
 * the kernel might send only part of (the socket's send queue has no room
 * for all of it), one with an address or out-of-band data, descriptors
 * or credentials with BEGIN, and what cannot be read whole (a header longer
 * than LG_BUS_READ, more than LG_BUS_STEPS lines and messages, a splice)
 * are refused, never guessed. */
#ifndef LG_BPF_BUS_MESSAGE_H
#define LG_BPF_BUS_MESSAGE_H

#include "common.h"
#include "maps.h"

#define LG_BUS_READ 512
#define LG_BUS_STEPS 16
#define LG_BUS_SEGMENTS 8
/* The longest authentication line read (AUTH EXTERNAL with a uid in hex
 * is 30 bytes). */
#define LG_BUS_LINE 128
/* Header fields read (a method call has at most nine kinds). */
#define LG_BUS_FIELDS 12
/* The fixed part of a message header, before its fields. */
#define LG_BUS_FIXED 16
#define LG_BUS_METHOD_CALL 1
#define LG_BUS_FIELD_PATH 1
#define LG_BUS_FIELD_MEMBER 3

/* Eight more bytes than are read: a four-byte value at a masked offset
 * near the end stays inside the buffer. */
struct lg_bus_buf {
	unsigned char c[LG_BUS_READ + 8];
	/* The walk's phase: still authenticating, and whether this write
	 * ended that with BEGIN. Kept here, not on the stack, so the verifier
	 * reads them as unknown and checks the walk's step once, not once per
	 * combination of their values (7.x then exceeds its limit). */
	__u32 auth;
	__u32 began;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_bus_buf);
} lg_bus_scratch __weak SEC(".maps");

/* Members' bus connections still authenticating (before BEGIN), by
 * socket: made at connect, gone at BEGIN or when the socket is freed. A
 * full map refuses the connection. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_BUS_WRITERS);
	__type(key, __u64);
	__type(value, __u64);
} lg_bus_auth __weak SEC(".maps");

/* In the fmod_ret form, the write a thread's first program allowed, so
 * the other does not follow the stream a second time. A full map makes
 * the second read the write again, which can refuse a message that runs
 * on into later writes, never pass one. */
struct lg_bus_note {
	__u64 msg;
	__u64 size;
	__u64 at;
};

/* How long after the first program the second may take a note. They run
 * one after the other on one task, but the task can be preempted between
 * them (an emulated machine under load took more than 10 ms). A note is
 * left over only when a third program between them refused the write;
 * the next write of the same msghdr and length within this time then
 * passes on it. */
#define LG_BUS_NOTE_NS 1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_BUS_WRITERS);
	__type(key, __u64);
	__type(value, struct lg_bus_note);
} lg_bus_allowed __weak SEC(".maps");

/* iov_iter before 6.4 named its iovec array `iov`. */
struct iov_iter___iov {
	const struct iovec *iov;
} __attribute__((preserve_access_index));

/* Where the bytes of a write are: one user buffer, or up to
 * LG_BUS_SEGMENTS iovecs. */
struct lg_bus_write {
	const void *base[LG_BUS_SEGMENTS];
	__u64 len[LG_BUS_SEGMENTS];
	__u32 segments;
};

/* 0, or -1 when the write is not from user memory. */
static __always_inline int bus_write_segments(struct msghdr *msg, struct lg_bus_write *w)
{
	struct iov_iter *it = &msg->msg_iter;
	__u8 type = BPF_CORE_READ(it, iter_type);
	__u64 skip = BPF_CORE_READ(it, iov_offset);
	__u64 left = BPF_CORE_READ(it, count);

	w->segments = 0;
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF)) {
		w->base[0] = (const char *)BPF_CORE_READ(it, ubuf) + skip;
		w->len[0] = left;
		w->segments = 1;
		return 0;
	}
	if (type != bpf_core_enum_value(enum iter_type, ITER_IOVEC))
		return -1;
	const struct iovec *iov;

	if (bpf_core_field_exists(it->__iov))
		iov = BPF_CORE_READ(it, __iov);
	else
		iov = BPF_CORE_READ((struct iov_iter___iov *)it, iov);
	__u64 segs = BPF_CORE_READ(it, nr_segs);

	for (int i = 0; i < LG_BUS_SEGMENTS; i++) {
		if (i >= segs || !left)
			break;
		struct iovec v;

		if (bpf_probe_read_kernel(&v, sizeof(v), &iov[i]))
			return -1;
		__u64 n = v.iov_len > skip ? v.iov_len - skip : 0;

		if (n > left)
			n = left;
		w->base[i] = (const char *)v.iov_base + skip;
		w->len[i] = n;
		w->segments = i + 1;
		left -= n;
		skip = 0;
	}
	/* More iovecs than read: bytes beyond them go unread, so refuse. */
	return left ? -1 : 0;
}

/* Copy up to LG_BUS_READ bytes at pos of the write into buf; the number
 * copied, which is less only when the segment ends; 0 when pos is past
 * the write or the bytes cannot be read. */
static __always_inline __u32 bus_read_at(struct lg_bus_write *w, __u64 pos, struct lg_bus_buf *buf)
{
	for (int i = 0; i < LG_BUS_SEGMENTS; i++) {
		if (i >= w->segments)
			return 0;
		__u64 len = w->len[i & (LG_BUS_SEGMENTS - 1)];

		if (pos >= len) {
			pos -= len;
			continue;
		}
		__u64 n = len - pos;

		if (n > LG_BUS_READ)
			n = LG_BUS_READ;
		n &= (LG_BUS_READ << 1) - 1;
		if (!n || n > LG_BUS_READ)
			return 0;
		if (bpf_probe_read_user(buf->c, n, w->base[i & (LG_BUS_SEGMENTS - 1)] + pos))
			return 0;
		return n;
	}
	return 0;
}

static __always_inline __u32 bus_u32(const unsigned char *p, bool big)
{
	return big ? ((__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3])
		   : ((__u32)p[3] << 24 | (__u32)p[2] << 16 | (__u32)p[1] << 8 | p[0]);
}

static __always_inline bool bus_has(const unsigned char *b, __u32 at, __u32 have, const char *s, __u32 n)
{
	if (at + n > have)
		return false;
	for (__u32 i = 0; i < n; i++)
		if (b[(at + i) & (LG_BUS_READ - 1)] != (unsigned char)s[i])
			return false;
	return true;
}

/* Whether a method call to the object at path (path_len bytes at path_at)
 * named by the member at member_at is one that changes systemd's or
 * logind's state: an object of theirs, a method that is not a read.
 * Global functions like this one are checked by the verifier once, on
 * their own. */
__noinline int lg_bus_manager_call(struct lg_bus_buf *buf, __u32 have, __u32 path_at, __u32 path_len,
				   __u32 member_at)
{
	if (!buf || have > LG_BUS_READ || !path_at || path_at >= LG_BUS_READ || path_len > LG_BUS_READ)
		return 0;
	const unsigned char *b = buf->c;
	__u32 at = path_at;

	/* "/org/freedesktop/systemd1" and below, "/org/freedesktop/login1" and below */
	if (!bus_has(b, at, have, "/org/freedesktop/", 17))
		return 0;
	at += 17;
	bool manager = false;

	if (path_len >= 25 && bus_has(b, at, have, "systemd1", 8))
		manager = path_len == 25 || bus_has(b, at + 8, have, "/", 1);
	else if (path_len >= 23 && bus_has(b, at, have, "login1", 6))
		manager = path_len == 23 || bus_has(b, at + 6, have, "/", 1);
	if (!manager)
		return 0;
	if (!member_at || member_at >= LG_BUS_READ)
		return 1;
	at = member_at;
	return !(bus_has(b, at, have, "Get", 3) || bus_has(b, at, have, "List", 4) ||
		 (bus_has(b, at, have, "Can", 3) && !bus_has(b, at, have, "Cancel", 6)) ||
		 bus_has(b, at, have, "Lookup", 6) || bus_has(b, at, have, "Dump", 4) ||
		 bus_has(b, at, have, "Subscribe", 9) || bus_has(b, at, have, "Unsubscribe", 11) ||
		 bus_has(b, at, have, "Introspect", 10) || bus_has(b, at, have, "Ping", 4));
}

enum lg_bus_verdict {
	LG_BUS_PASS = 0,
	LG_BUS_MANAGER_CALL = 1, /* a call that changes systemd's or logind's state */
	LG_BUS_UNREADABLE = 2,   /* a write that cannot be followed (see above) */
};

/* The walk over a message's header fields. */
struct lg_bus_fields {
	struct lg_bus_buf *buf;
	__u32 at;
	__u32 end;
	__u32 path_at;
	__u32 path_len;
	__u32 member_at;
	bool big;
	bool unreadable;
};

/* One header field: code, signature (length, one type, NUL), value. A
 * bpf_loop callback. */
static long bus_field(__u32 i, struct lg_bus_fields *f)
{
	const unsigned char *b = f->buf->c;
	__u32 end = f->end;
	__u32 at = (f->at + 7) & ~7U;

	if (at >= end || end > LG_BUS_READ)
		return 1;
	if (at + 4 > end) {
		f->unreadable = true;
		return 1;
	}
	__u8 code = b[at & (LG_BUS_READ - 1)];
	__u8 siglen = b[(at + 1) & (LG_BUS_READ - 1)];
	__u8 sig = b[(at + 2) & (LG_BUS_READ - 1)];
	__u32 n;

	at += 4;
	if (siglen != 1) {
		f->unreadable = true;
		return 1;
	}
	if (sig == 'u') {
		f->at = ((at + 3) & ~3U) + 4;
		return 0;
	}
	if (sig == 'g') {
		n = b[at & (LG_BUS_READ - 1)];
		at += 1;
	} else if (sig == 's' || sig == 'o') {
		at = (at + 3) & ~3U;
		if (at + 4 > end) {
			f->unreadable = true;
			return 1;
		}
		n = bus_u32(b + (at & (LG_BUS_READ - 1)), f->big);
		at += 4;
	} else {
		f->unreadable = true;
		return 1;
	}
	if (n > LG_BUS_READ || at + n + 1 > end) {
		f->unreadable = true;
		return 1;
	}
	if (code == LG_BUS_FIELD_PATH) {
		f->path_at = at;
		f->path_len = n;
	} else if (code == LG_BUS_FIELD_MEMBER) {
		f->member_at = at;
	}
	f->at = at + n + 1;
	return 0;
}

/* The message at the start of buf (have bytes of it): its whole length,
 * or LG_BUS_STEP_MANAGER_CALL / LG_BUS_STEP_UNREADABLE. */
#define LG_BUS_STEP_MANAGER_CALL ((__u64)-1)
#define LG_BUS_STEP_UNREADABLE ((__u64)-2)

__noinline __u64 lg_bus_message(struct lg_bus_buf *buf, __u32 have)
{
	if (!buf || have < LG_BUS_FIXED || have > LG_BUS_READ)
		return LG_BUS_STEP_UNREADABLE;
	const unsigned char *b = buf->c;
	bool big = b[0] == 'B';
	__u32 body = bus_u32(b + 4, big);
	__u32 fields = bus_u32(b + 12, big);

	if (fields > LG_BUS_READ - LG_BUS_FIXED || LG_BUS_FIXED + fields > have)
		return LG_BUS_STEP_UNREADABLE;
	__u32 end = LG_BUS_FIXED + fields;
	__u64 total = ((end + 7) & ~7U) + (__u64)body;

	if (b[1] != LG_BUS_METHOD_CALL)
		return total;
	struct lg_bus_fields f = {.buf = buf, .at = LG_BUS_FIXED, .end = end, .big = big};

	bpf_loop(LG_BUS_FIELDS, bus_field, &f, 0);
	if (f.unreadable || ((f.at + 7) & ~7U) < ((end + 7) & ~7U))
		return LG_BUS_STEP_UNREADABLE;
	if (lg_bus_manager_call(buf, have, f.path_at, f.path_len, f.member_at))
		return LG_BUS_STEP_MANAGER_CALL;
	return total;
}

/* An authentication line the client sends (the bus daemon's answers come
 * the other way): its length with CRLF, or 0. */
__noinline __u32 lg_bus_auth_line(struct lg_bus_buf *buf, __u32 have)
{
	if (!buf || have > LG_BUS_READ)
		return 0;
	const unsigned char *b = buf->c;

	if (!(bus_has(b, 0, have, "AUTH", 4) || bus_has(b, 0, have, "BEGIN", 5) ||
	      bus_has(b, 0, have, "NEGOTIATE_UNIX_FD", 17) || bus_has(b, 0, have, "DATA", 4) ||
	      bus_has(b, 0, have, "CANCEL", 6) || bus_has(b, 0, have, "ERROR", 5)))
		return 0;
	for (__u32 i = 1; i < LG_BUS_LINE; i++) {
		if (i + 1 >= have)
			return 0;
		if (b[i] == '\r' && b[i + 1] == '\n')
			return i + 2;
	}
	return 0;
}

/* What the bytes at the start of buf (have of them, at offset `at` of
 * the write) are: in the authentication phase the credentials NUL (first
 * in the write) or a line, up to BEGIN, which ends the phase; then
 * messages. How many bytes they take, or a verdict. */

__noinline __u64 lg_bus_step(struct lg_bus_buf *buf, __u32 have, __u64 at)
{
	if (!buf || !have || have > LG_BUS_READ)
		return LG_BUS_STEP_UNREADABLE;
	unsigned char first = buf->c[0];

	if (buf->auth) {
		if (first == 0)
			return at == 0 ? 1 : LG_BUS_STEP_UNREADABLE;
		if (bus_has(buf->c, 0, have, "BEGIN\r\n", 7)) {
			buf->auth = 0;
			buf->began = 1;
			return 7;
		}
		__u32 line = lg_bus_auth_line(buf, have);

		return line ? line : LG_BUS_STEP_UNREADABLE;
	}
	if ((first == 'l' || first == 'B') && buf->c[1] >= 1 && buf->c[1] <= 4) {
		__u64 total = lg_bus_message(buf, have);

		return total ? total : LG_BUS_STEP_UNREADABLE;
	}
	return LG_BUS_STEP_UNREADABLE;
}

struct lg_bus_walk {
	struct lg_bus_write w;
	struct lg_bus_buf *buf;
	__u64 pos;
	__u64 size;
	int verdict;
};

/* One step of the walk over a write; a bpf_loop callback, so the verifier
 * checks it once rather than once per step. */
static long bus_walk_step(__u32 i, struct lg_bus_walk *k)
{
	if (k->pos >= k->size)
		return 1;
	__u64 step = lg_bus_step(k->buf, bus_read_at(&k->w, k->pos, k->buf), k->pos);

	if (step == LG_BUS_STEP_MANAGER_CALL) {
		k->verdict = LG_BUS_MANAGER_CALL;
		return 1;
	}
	if (step == LG_BUS_STEP_UNREADABLE) {
		k->verdict = LG_BUS_UNREADABLE;
		return 1;
	}
	k->pos += step;
	return 0;
}

#define LG_MSG_OOB 1

/* Whether the socket's send queue has room for all of a write, so the
 * kernel sends it whole or not at all: what is queued and not yet read,
 * and the write with a sixteenth for buffer overhead. */
static __always_inline bool bus_room_for(struct sock *sk, __u64 size)
{
	__u64 queued = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter);
	__u64 limit = (__u32)BPF_CORE_READ(sk, sk_sndbuf);

	return queued + size + size / 16 + 4096 <= limit;
}

/* What a member's write of size bytes to a bus connection (sk) does. */
static __noinline int bus_write_verdict(struct sock *sk, struct msghdr *msg, __u64 size)
{
	__u64 key = (__u64)sk;
	__u32 zero = 0;
	struct lg_bus_walk k = {.size = size};
	bool auth = bpf_map_lookup_elem(&lg_bus_auth, &key) != 0;

	if (BPF_CORE_READ(msg, msg_name) || (BPF_CORE_READ(msg, msg_flags) & LG_MSG_OOB))
		return LG_BUS_UNREADABLE;
	if (!bus_room_for(sk, size))
		return LG_BUS_UNREADABLE;
	k.buf = bpf_map_lookup_elem(&lg_bus_scratch, &zero);
	if (!k.buf || bus_write_segments(msg, &k.w))
		return LG_BUS_UNREADABLE;
	k.buf->auth = auth;
	k.buf->began = 0;
	bpf_loop(LG_BUS_STEPS, bus_walk_step, &k, 0);
	if (k.verdict)
		return k.verdict;
	if (k.pos != size)
		return LG_BUS_UNREADABLE;
	/* A descriptor or credentials the kernel refuses after this hook
	 * fail the write; were it the one with BEGIN, the door would read
	 * messages where the daemon still reads lines. (godbus sends its
	 * credentials with the first byte, before BEGIN.) */
	if (k.buf->began && BPF_CORE_READ(msg, msg_controllen))
		return LG_BUS_UNREADABLE;
	if (k.buf->began)
		bpf_map_delete_elem(&lg_bus_auth, &key);
	return LG_BUS_PASS;
}

#endif
