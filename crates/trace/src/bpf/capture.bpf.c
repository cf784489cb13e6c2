// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// Every block request issued to the traced disks, one event each in a ring buffer (`events`),
// as bcc's biosnoop reports them but taken at the issue alone: when, where (disk, sector),
// how much, which operation and flags, who was running (tgid, pid, comm: the submitter when
// the request is issued in its context, else the kernel thread that issued it), the cgroup
// of its first bio, and how many of the disk's requests were in flight once it was issued.
// The loader (src/capture.rs) reads them; `iogauge capture` writes them out.
//
// Requests may be filtered (a database's own): kept when their first bio's cgroup is one of
// `keep_cg`, the running process is in `pids` (the loader updates it as backends come and
// go), or their first page belongs to one of `files` (page-cache writeback, issued by a
// flusher thread for the files' owner). Requests left out are counted per disk (`others`).
// A full ring (the reader fell behind) drops the event and counts it (`dropped`): a program
// never waits.
//
// Per request: a few loads, a per-disk atomic add for the in-flight count at the issue and
// one at the completion, a hash lookup when filtering by process, a ring reservation and a
// submit (bench/capture measures it).
// The kernel structs below are the few fields used, relocated against the running kernel's
// BTF (CO-RE), so no kernel headers are needed; the request flags' bit numbers, which moved
// between kernels, are relocated too (enum req_flag_bits).

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u64 sector_t;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define CORE __attribute__((preserve_access_index))

// enum bpf_map_type
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27

// Helpers by their number in include/uapi/linux/bpf.h.
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static __u64 (*bpf_ringbuf_query)(void *ringbuf, __u64 flags) = (void *)134;

// bpf_ringbuf_submit's flags and bpf_ringbuf_query's question (include/uapi/linux/bpf.h).
#define BPF_RB_NO_WAKEUP 1
#define BPF_RB_FORCE_WAKEUP 2
#define BPF_RB_AVAIL_DATA 0

// libbpf's bpf_core_enum_value: the value the running kernel gives an enumerator (the values
// below are this source's guesses, replaced at load time).
#define BPF_ENUMVAL_VALUE 1
#define core_enum_value(type, name) __builtin_preserve_enum_value(*(typeof(type) *)name, BPF_ENUMVAL_VALUE)

enum req_flag_bits {
	__REQ_SYNC = 11,
	__REQ_META = 12,
	__REQ_FUA = 17,
	__REQ_PREFLUSH = 18,
	__REQ_RAHEAD = 19,
};

struct gendisk {
	int major;
	int first_minor;
} CORE;

struct request_queue {
	struct gendisk *disk;
} CORE;

struct kernfs_node {
	__u64 id;
} CORE;

struct cgroup {
	struct kernfs_node *kn;
} CORE;

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} CORE;

struct blkcg {
	struct cgroup_subsys_state css;
} CORE;

struct blkcg_gq {
	struct blkcg *blkcg;
} CORE;

struct super_block {
	__u32 s_dev;
} CORE;

struct inode {
	unsigned long i_ino;
	__u32 i_rdev;
	struct super_block *i_sb;
} CORE;

struct address_space {
	struct inode *host;
} CORE;

struct page {
	struct address_space *mapping;
} CORE;

struct bio_vec {
	struct page *bv_page;
} CORE;

struct bio {
	struct blkcg_gq *bi_blkg;
	struct bio_vec *bi_io_vec;
} CORE;

// A request's state (include/linux/blk-mq.h): idle until it is started (issued).
enum mq_rq_state {
	MQ_RQ_IDLE = 0,
};

struct request {
	struct request_queue *q;
	struct bio *bio;
	unsigned int cmd_flags;
	sector_t __sector;
	unsigned int __data_len;
	enum mq_rq_state state;
} CORE;

#define MAX_DISKS 64
#define MAX_KEEP_CG 8

// What the loader reads as `RawEvent` in src/capture.rs.
struct event {
	__u64 at;        // bpf_ktime_get_ns: CLOCK_MONOTONIC
	__u64 sector;    // 512-byte sectors from the disk's start
	__u64 cgroup;    // the first bio's cgroup (kernfs id), 0 when none
	__u32 dev;       // MKDEV: major << 20 | minor
	__u32 bytes;
	__u32 cmd_flags; // the operation (low 8 bits) and flags, raw
	__u32 flags;     // FLAG_* below, decoded with the running kernel's bit numbers
	__u32 tgid;
	__u32 pid;
	__u32 in_flight; // the disk's requests in flight, this one included
	__u32 pad;
	char comm[16];
};

#define FLAG_SYNC 1
#define FLAG_FUA 2
#define FLAG_PREFLUSH 4
#define FLAG_META 8
#define FLAG_RAHEAD 16

// The disks to trace, as the kernel's dev_t, at their slots; set by the loader.
volatile const __u32 traced[MAX_DISKS];
volatile const __u32 n_traced;

// The filter, set by the loader; `filtered` 0 keeps every request.
volatile const __u32 filtered;
volatile const __u64 keep_cg[MAX_KEEP_CG];
volatile const __u32 n_keep_cg;
volatile const __u32 n_files;

// The reader is woken once the ring holds this many bytes not yet read (set by the loader to
// a sixteenth of the ring), not at every event: by default a submit wakes a reader that has
// caught up, which at a few hundred thousand requests a second is a wake-up (an irq_work
// and a context switch) per request, costing more than all the rest. Below it, the events
// wait for the reader's next timeout.
volatile const __u64 wake_bytes = 1 << 20;

// 16 MiB unless the loader sizes it.
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

// The processes (tgid) whose requests are kept; the loader replaces them while running.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

// A file as the kernel knows it (layers.bpf.c's file_key, src/job.rs's FileKey).
struct file_key {
	__u64 ino;
	__u64 dev;
};

// Files whose pages' requests are kept; set by the loader before attaching.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct file_key);
	__type(value, __u8);
} files SEC(".maps");

// Each traced disk's requests in flight (issued, not completed nor requeued): shared by the
// CPUs, so changed atomically. A request leaves it only if it was issued (a data-less flush
// that the flush machinery completes without issuing it does not), at its last completion,
// and never below 0: one issued before the capture started was not counted, so until the
// disk's requests have turned over the count may be short by those few.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DISKS);
	__type(key, __u32);
	__type(value, __u64);
} in_flight SEC(".maps");

// Requests the filter left out, per disk slot, per CPU.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DISKS);
	__type(key, __u32);
	__type(value, __u64);
} others SEC(".maps");

// Events lost to a full ring, per CPU.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

// The slot of the disk `rq` is on, or -1 when it is not traced.
static __attribute__((always_inline)) int slot_of(struct request *rq)
{
	struct gendisk *disk = rq->q->disk;
	if (!disk)
		return -1;
	__u32 dev = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	__u32 n = n_traced;
	for (__u32 slot = 0; slot < MAX_DISKS && slot < n; slot++)
		if (traced[slot] == dev)
			return (int)slot;
	return -1;
}

// layers.bpf.c's file_of: the file of `bio`'s first page, when it is a page-cache page.
// Read with bpf_probe_read_kernel, as numbers: the verifier allows no bit test on a pointer
// (the mapping's low bits mark anonymous pages).
static __attribute__((always_inline)) int file_of(struct bio *bio, struct file_key *k)
{
	struct bio_vec *v = bio->bi_io_vec;
	if (!v)
		return 0;
	struct page *pg = v->bv_page;
	if (!pg)
		return 0;
	__u64 m = 0;
	if (bpf_probe_read_kernel(&m, sizeof(m), &pg->mapping) || !m || (m & 3))
		return 0;
	__u64 host = 0;
	if (bpf_probe_read_kernel(&host, sizeof(host), &((struct address_space *)m)->host) ||
	    !host)
		return 0;
	struct inode *in = (struct inode *)host;
	__u32 rdev = 0;
	bpf_probe_read_kernel(&rdev, sizeof(rdev), &in->i_rdev);
	if (rdev) {
		k->ino = rdev;
		k->dev = 0;
		return 1;
	}
	__u64 sb = 0;
	__u32 sdev = 0;
	bpf_probe_read_kernel(&k->ino, sizeof(k->ino), &in->i_ino);
	bpf_probe_read_kernel(&sb, sizeof(sb), &in->i_sb);
	if (sb)
		bpf_probe_read_kernel(&sdev, sizeof(sdev), &((struct super_block *)sb)->s_dev);
	k->dev = sdev;
	return 1;
}

// Whether the filter keeps a request of cgroup `cg`, first bio `bio`, issued while `tgid`
// ran.
static __attribute__((always_inline)) int kept(__u64 cg, struct bio *bio, __u32 tgid)
{
	__u32 n = n_keep_cg;
	for (__u32 i = 0; i < MAX_KEEP_CG && i < n; i++)
		if (keep_cg[i] == cg)
			return 1;
	if (bpf_map_lookup_elem(&pids, &tgid))
		return 1;
	struct file_key k = {};
	return n_files && bio && file_of(bio, &k) && bpf_map_lookup_elem(&files, &k);
}

// The flags the loader reports, from the raw ones, by the running kernel's bit numbers.
static __attribute__((always_inline)) __u32 flags_of(__u32 raw)
{
	__u32 f = 0;
	if (raw & (1U << core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		f |= FLAG_SYNC;
	if (raw & (1U << core_enum_value(enum req_flag_bits, __REQ_FUA)))
		f |= FLAG_FUA;
	if (raw & (1U << core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		f |= FLAG_PREFLUSH;
	if (raw & (1U << core_enum_value(enum req_flag_bits, __REQ_META)))
		f |= FLAG_META;
	if (raw & (1U << core_enum_value(enum req_flag_bits, __REQ_RAHEAD)))
		f |= FLAG_RAHEAD;
	return f;
}

SEC("tp_btf/block_rq_issue")
int on_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int slot = slot_of(rq);
	if (slot < 0)
		return 0;
	__u64 at = bpf_ktime_get_ns();
	__u32 s = slot;
	__u64 *n = bpf_map_lookup_elem(&in_flight, &s);
	// A completion's decrement can still be undone while an issue reads the count: this
	// one is in flight, at the least.
	__s64 before = n ? (__s64)__sync_fetch_and_add(n, 1) : 0;
	__u32 busy = before > 0 ? (__u32)before + 1 : 1;
	struct bio *bio = rq->bio;
	struct blkcg_gq *g = bio ? bio->bi_blkg : 0;
	__u64 cg = g ? g->blkcg->css.cgroup->kn->id : 0;
	__u64 id = bpf_get_current_pid_tgid();
	if (filtered && !kept(cg, bio, id >> 32)) {
		__u64 *o = bpf_map_lookup_elem(&others, &s);
		if (o)
			*o += 1;
		return 0;
	}
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 zero = 0;
		__u64 *d = bpf_map_lookup_elem(&dropped, &zero);
		if (d)
			*d += 1;
		return 0;
	}
	__u32 raw = rq->cmd_flags;
	e->at = at;
	e->sector = rq->__sector;
	e->cgroup = cg;
	e->dev = traced[s & (MAX_DISKS - 1)];
	e->bytes = rq->__data_len;
	e->cmd_flags = raw;
	e->flags = flags_of(raw);
	e->tgid = id >> 32;
	e->pid = (__u32)id;
	e->in_flight = busy;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	__u64 waiting = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, waiting >= wake_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

// A request no longer in flight on its disk: one fewer, if it was issued (started), never
// below 0.
static __attribute__((always_inline)) void left(struct request *rq)
{
	if (rq->state == MQ_RQ_IDLE)
		return;
	int slot = slot_of(rq);
	if (slot < 0)
		return;
	__u32 s = slot;
	__u64 *n = bpf_map_lookup_elem(&in_flight, &s);
	if (n && (__s64)__sync_fetch_and_add(n, -1) <= 0)
		__sync_fetch_and_add(n, 1);
}

SEC("tp_btf/block_rq_complete")
int on_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	// A request completed in parts passes here once for each; it leaves at its last.
	__u32 done = (__u32)ctx[2];
	if (done >= rq->__data_len)
		left(rq);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int on_requeue(__u64 *ctx)
{
	left((struct request *)ctx[0]);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
